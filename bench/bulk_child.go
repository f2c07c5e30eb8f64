package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// child is a program the bulk experiment runs (a server, a client, the
// busy loop): its standard output comes line by line, its standard input
// is its lifeline (every child ends when it ends), and the tail of its
// standard error explains a failure.
type child struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte // standard output, a line at a time; closed at its end
	stderr *tailBuffer
	done   chan struct{} // closed when the program has exited
	err    error         // what Wait returned, once done is closed
}

// childStopGrace is how long a child has to exit once its standard input
// is closed.
const childStopGrace = 10 * time.Second

func startChild(argv []string) (*child, error) {
	if len(argv) == 0 {
		return nil, errors.New("bench: a child without a program")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = childProcAttr()
	c := &child{
		name: strings.Join(argv, " "), cmd: cmd, lines: make(chan []byte, 16),
		stderr: &tailBuffer{max: 4 << 10}, done: make(chan struct{}),
	}
	cmd.Stderr = c.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", c.name, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(c.lines)
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// failure describes how the program failed, with its last words.
func (c *child) failure(err error) error {
	if msg := strings.TrimSpace(c.stderr.String()); msg != "" {
		return fmt.Errorf("%s: %w: %s", c.name, err, msg)
	}
	return fmt.Errorf("%s: %w", c.name, err)
}

// readJSON waits up to timeout for the next line and decodes it into v.
func (c *child) readJSON(ctx context.Context, timeout time.Duration, v any) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case line, ok := <-c.lines:
		if !ok {
			<-c.done
			if c.err != nil {
				return c.failure(c.err)
			}
			return c.failure(errors.New("ended without a report"))
		}
		if err := json.Unmarshal(line, v); err != nil {
			return c.failure(fmt.Errorf("report %q: %w", line, err))
		}
		return nil
	case <-ctx.Done():
		return c.failure(context.Cause(ctx))
	case <-t.C:
		return c.failure(fmt.Errorf("no report within %v", timeout))
	}
}

// ask writes a line to the child's standard input.
func (c *child) ask(line string) error {
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		return c.failure(err)
	}
	return nil
}

// stop closes the child's standard input, which ends it, and kills it if
// it has not ended within childStopGrace. It reports how it ended.
func (c *child) stop() error {
	_ = c.stdin.Close()
	// Output nobody reads must not keep the child from exiting.
	go func() {
		for range c.lines {
		}
	}()
	t := time.NewTimer(childStopGrace)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		_ = c.cmd.Process.Kill()
		<-c.done
		return c.failure(fmt.Errorf("still running %v after its input closed; killed", childStopGrace))
	}
	if c.err != nil {
		return c.failure(c.err)
	}
	return nil
}

// cpuTime is the processor time, user and system, the child used, once it
// has exited.
func (c *child) cpuTime() time.Duration {
	select {
	case <-c.done:
	default:
		return 0
	}
	if c.cmd.ProcessState == nil {
		return 0
	}
	return c.cmd.ProcessState.UserTime() + c.cmd.ProcessState.SystemTime()
}

// kill ends the child at once.
func (c *child) kill() {
	_ = c.cmd.Process.Kill()
	_ = c.stop()
}

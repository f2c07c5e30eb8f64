package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is an external program a stack runs (the quic-go peer): its
// standard output is kept for the program's report, the tail of its
// standard error for the error message when it fails.
type process struct {
	cmd    *exec.Cmd
	stdout *outputCapture
	stderr *tailBuffer
	done   chan struct{} // closed when the program has exited
	err    error         // what Wait returned, once done is closed
	name   string        // the command line, for messages
}

// processOutputLimit bounds what is kept of a program's standard output;
// the peer prints one JSON line.
const processOutputLimit = 64 << 10

func startProcess(cmd *exec.Cmd) (*process, error) {
	p := &process{
		cmd:    cmd,
		stdout: newOutputCapture(processOutputLimit),
		stderr: &tailBuffer{max: 4 << 10},
		done:   make(chan struct{}),
		name:   strings.Join(cmd.Args, " "),
	}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	// The output is copied by goroutines that end with the program; a
	// grandchild holding the pipes must not hold Wait as well.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", p.name, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// failure describes how the program ended, with its last words.
func (p *process) failure(err error) error {
	if msg := strings.TrimSpace(p.stderr.String()); msg != "" {
		return fmt.Errorf("%w: %s", err, msg)
	}
	return err
}

// exited is nil while the program runs, and says how it ended otherwise.
func (p *process) exited() error {
	select {
	case <-p.done:
		if p.err != nil {
			return p.failure(fmt.Errorf("exited: %w", p.err))
		}
		return p.failure(errors.New("exited"))
	default:
		return nil
	}
}

// firstLine waits for the program's first line of output.
func (p *process) firstLine(ctx context.Context, timeout time.Duration) ([]byte, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.stdout.lineReady:
		return p.stdout.first(), nil
	case <-p.done:
		// The line may have come just before the end.
		select {
		case <-p.stdout.lineReady:
			return p.stdout.first(), nil
		default:
		}
		return nil, p.exited()
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for %s to start: %w", p.name, context.Cause(ctx))
	case <-t.C:
		return nil, p.failure(fmt.Errorf("%s said nothing within %v", p.name, timeout))
	}
}

// wait waits for the program to end and returns its output's last line.
// When ctx ends first the program is killed.
func (p *process) wait(ctx context.Context) ([]byte, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		_ = p.cmd.Process.Kill()
		<-p.done
		return nil, p.failure(fmt.Errorf("killed: %w", context.Cause(ctx)))
	}
	if p.err != nil {
		return nil, p.failure(p.err)
	}
	line := p.stdout.last()
	if len(line) == 0 {
		return nil, p.failure(fmt.Errorf("%s printed nothing", p.name))
	}
	return line, nil
}

// stop asks the program to end (SIGTERM), kills it if it has not within
// quicgoStopGrace, and reports whether it ended cleanly. A program that
// already ended reports how.
func (p *process) stop() error {
	select {
	case <-p.done:
		if p.err != nil {
			return p.failure(fmt.Errorf("exited before it was stopped: %w", p.err))
		}
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		_ = p.cmd.Process.Kill()
	}
	t := time.NewTimer(quicgoStopGrace)
	defer t.Stop()
	select {
	case <-p.done:
		if p.err != nil {
			return p.failure(fmt.Errorf("stopping: %w", p.err))
		}
		return nil
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.done
		return p.failure(fmt.Errorf("%s did not stop within %v of SIGTERM; killed", p.name, quicgoStopGrace))
	}
}

// outputCapture keeps up to limit bytes of a program's output and signals
// its first complete line.
type outputCapture struct {
	mu        sync.Mutex
	buf       []byte
	limit     int
	lineReady chan struct{}
	signalled bool
}

func newOutputCapture(limit int) *outputCapture {
	return &outputCapture{limit: limit, lineReady: make(chan struct{})}
}

func (c *outputCapture) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.limit - len(c.buf); room > 0 {
		c.buf = append(c.buf, b[:min(len(b), room)]...)
	}
	if !c.signalled && bytes.IndexByte(c.buf, '\n') >= 0 {
		c.signalled = true
		close(c.lineReady)
	}
	return len(b), nil
}

// first is the first line, without its newline.
func (c *outputCapture) first() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	line, _, _ := bytes.Cut(c.buf, []byte{'\n'})
	return bytes.Clone(line)
}

// last is the last non-empty line.
func (c *outputCapture) last() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := bytes.TrimRight(c.buf, "\r\n")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return bytes.Clone(b)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

//go:build linux

package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is a peer's program: its output goes to files in the cell's
// log directory (kept for a look after a failure), and the end of its
// standard error makes the message when it fails.
type process struct {
	cmd    *exec.Cmd
	name   string
	stdout *lineWatch
	tail   *tail
	done   chan struct{}
	err    error
	files  []*os.File
}

// stopGrace is how long a program has to exit after SIGTERM.
const stopGrace = 5 * time.Second

// startProcess starts cmd with its output in logs/<label>.stdout and
// .stderr.
func startProcess(cmd *exec.Cmd, logs, label string) (*process, error) {
	p := &process{cmd: cmd, name: filepath.Base(cmd.Path), stdout: &lineWatch{ready: make(chan struct{})},
		tail: &tail{max: 2 << 10}, done: make(chan struct{})}
	outFile, err := os.Create(filepath.Join(logs, label+".stdout"))
	if err != nil {
		return nil, err
	}
	errFile, err := os.Create(filepath.Join(logs, label+".stderr"))
	if err != nil {
		outFile.Close()
		return nil, err
	}
	p.files = []*os.File{outFile, errFile}
	cmd.Stdout = io.MultiWriter(outFile, p.stdout)
	cmd.Stderr = io.MultiWriter(errFile, p.tail)
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		p.closeFiles()
		return nil, fmt.Errorf("starting %s: %w", p.name, err)
	}
	go func() {
		p.err = cmd.Wait()
		p.closeFiles()
		close(p.done)
	}()
	return p, nil
}

func (p *process) closeFiles() {
	for _, f := range p.files {
		f.Close()
	}
}

// failure adds the program's last words to err.
func (p *process) failure(err error) error {
	if msg := strings.TrimSpace(p.tail.String()); msg != "" {
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 && len(msg) > 300 {
			msg = msg[i+1:]
		}
		return fmt.Errorf("%w: %s", err, msg)
	}
	return err
}

// firstLine waits for the first line of standard output.
func (p *process) firstLine(ctx context.Context) ([]byte, error) {
	select {
	case <-p.stdout.ready:
		return p.stdout.first(), nil
	case <-p.done:
		select {
		case <-p.stdout.ready:
			return p.stdout.first(), nil
		default:
		}
		return nil, p.failure(fmt.Errorf("%s exited: %v", p.name, p.err))
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for %s: %w", p.name, context.Cause(ctx))
	}
}

// wait waits for the program to end, and kills it if ctx ends first.
func (p *process) wait(ctx context.Context) error {
	select {
	case <-p.done:
	case <-ctx.Done():
		_ = p.cmd.Process.Kill()
		<-p.done
		return p.failure(fmt.Errorf("%s killed: %w", p.name, context.Cause(ctx)))
	}
	if p.err != nil {
		return p.failure(fmt.Errorf("%s: %w", p.name, p.err))
	}
	return nil
}

// running is nil while the program runs.
func (p *process) running() error {
	select {
	case <-p.done:
		return p.failure(fmt.Errorf("%s exited: %v", p.name, p.err))
	default:
		return nil
	}
}

// stop ends a server: SIGTERM, then SIGKILL after stopGrace. A server
// that had already exited, or that dies of anything but the signals,
// failed.
func (p *process) stop() error {
	if err := p.running(); err != nil {
		return err
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.done
		return nil
	}
	var ee *exec.ExitError
	if p.err != nil && !(errors.As(p.err, &ee) && signalled(ee)) {
		return p.failure(fmt.Errorf("%s: %w", p.name, p.err))
	}
	return nil
}

// signalled reports a program that ended on a signal, as a server told
// to stop may.
func signalled(ee *exec.ExitError) bool {
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

// lineWatch signals the first complete line written to it and keeps it.
type lineWatch struct {
	mu    sync.Mutex
	buf   []byte
	ready chan struct{}
	seen  bool
}

func (l *lineWatch) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.seen {
		l.buf = append(l.buf, b...)
		if bytes.IndexByte(l.buf, '\n') >= 0 {
			l.seen = true
			close(l.ready)
		}
	}
	return len(b), nil
}

func (l *lineWatch) first() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	line, _, _ := bytes.Cut(l.buf, []byte{'\n'})
	return bytes.Clone(line)
}

// tail keeps the last bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

package emulate

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// alarm is a one-shot timer with microsecond precision that a goroutine can
// wait on in Go's network poller: a timerfd on CLOCK_MONOTONIC. Go's own
// timers round sub-millisecond waits up to a millisecond, too coarse for a
// link whose packets are due every 40 microseconds.
//
// set and close must be serialised by the caller; wait may run
// concurrently with set, which is the point: a reader that offers a packet
// due earlier than the sender's current wait re-arms the alarm.
type alarm struct {
	clk    clock
	fd     int
	file   *os.File
	buf    [8]byte
	closed bool
}

func newAlarm(clk clock) (*alarm, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("timerfd_create: %w", err)
	}
	return &alarm{clk: clk, fd: fd, file: os.NewFile(uintptr(fd), "emulator-alarm")}, nil
}

// set arms the alarm to ring at t (time since the clock's epoch); a time in
// the past rings at once.
func (a *alarm) set(t time.Duration) error {
	if a.closed {
		return os.ErrClosed
	}
	spec := unix.ItimerSpec{Value: a.clk.mono(max(t, 1))}
	if err := unix.TimerfdSettime(a.fd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
		return fmt.Errorf("timerfd_settime: %w", err)
	}
	return nil
}

// clear disarms the alarm.
func (a *alarm) clear() error {
	if a.closed {
		return os.ErrClosed
	}
	var spec unix.ItimerSpec
	if err := unix.TimerfdSettime(a.fd, 0, &spec, nil); err != nil {
		return fmt.Errorf("timerfd_settime: %w", err)
	}
	return nil
}

// wait blocks until the alarm rings. It returns os.ErrClosed once the alarm
// is closed.
func (a *alarm) wait() error {
	_, err := a.file.Read(a.buf[:])
	if errors.Is(err, os.ErrClosed) {
		return os.ErrClosed
	}
	return err
}

// close wakes a pending wait and releases the timerfd.
func (a *alarm) close() error {
	if a.closed {
		return nil
	}
	a.closed = true
	return a.file.Close()
}

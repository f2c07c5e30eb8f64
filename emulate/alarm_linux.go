package emulate

import (
	"fmt"
	"time"

	"github.com/satquic/satquic/emulate/internal/rtio"
	"golang.org/x/sys/unix"
)

// alarm is a one-shot timer with microsecond precision: a timerfd on
// CLOCK_MONOTONIC, waited on with a poller. Go's own timers round
// sub-millisecond waits up to a millisecond, too coarse for a link whose
// packets are due every 40 microseconds.
//
// set and clear may be called from any thread while the owner waits (a
// reader that offers a packet due earlier than the current wait re-arms
// it), but the caller serialises them with close.
type alarm struct {
	clk rtio.Clock
	fd  int
}

func newAlarm(clk rtio.Clock) (*alarm, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("timerfd_create: %w", err)
	}
	return &alarm{clk: clk, fd: fd}, nil
}

// set arms the alarm to ring at t (time since the clock's epoch); a time in
// the past rings at once.
func (a *alarm) set(t time.Duration) error {
	// An all-zero value would disarm the timer; one nanosecond after the
	// epoch is in the past, which rings at once.
	spec := unix.ItimerSpec{Value: a.clk.Mono(max(t, 1))}
	if err := unix.TimerfdSettime(a.fd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
		return fmt.Errorf("timerfd_settime: %w", err)
	}
	return nil
}

// clear disarms the alarm.
func (a *alarm) clear() error {
	var spec unix.ItimerSpec
	if err := unix.TimerfdSettime(a.fd, 0, &spec, nil); err != nil {
		return fmt.Errorf("timerfd_settime: %w", err)
	}
	return nil
}

// drain consumes a ring, so that the poller stops reporting it. A re-arm
// between the ring and the drain leaves nothing to read, which is fine.
func (a *alarm) drain() {
	var buf [8]byte
	_, _ = unix.Read(a.fd, buf[:])
}

func (a *alarm) close() { unix.Close(a.fd) }

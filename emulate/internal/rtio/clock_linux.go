package rtio

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// Clock is a time base: durations since an epoch, read from Go's monotonic
// clock, and convertible to CLOCK_MONOTONIC instants for timerfd and
// clock_nanosleep. Go's monotonic reading is CLOCK_MONOTONIC on Linux, so
// the two never drift apart; the offset is fixed once, when the clock is
// made.
type Clock struct {
	Epoch     time.Time
	monoEpoch int64 // CLOCK_MONOTONIC nanoseconds at Epoch
}

// NewClock starts a clock at the current instant.
func NewClock() (Clock, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return Clock{}, fmt.Errorf("reading CLOCK_MONOTONIC: %w", err)
	}
	return Clock{Epoch: time.Now(), monoEpoch: ts.Nano()}, nil
}

// Now is the time since the epoch.
func (c Clock) Now() time.Duration { return time.Since(c.Epoch) }

// Mono converts a time since the epoch to a CLOCK_MONOTONIC instant.
func (c Clock) Mono(t time.Duration) unix.Timespec {
	return unix.NsecToTimespec(c.monoEpoch + int64(t))
}

// SleepUntil blocks the calling thread, not just the goroutine, until t
// since the epoch: with high priority it wakes within microseconds,
// where a Go timer rounds up to the millisecond.
func (c Clock) SleepUntil(t time.Duration) {
	ts := c.Mono(t)
	for {
		err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

package emulate

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// clock is the emulator's time base: durations since an epoch, read from
// Go's monotonic clock, and convertible to CLOCK_MONOTONIC instants for
// timerfd. Go's monotonic reading is CLOCK_MONOTONIC on Linux, so the two
// never drift apart; the offset is fixed once, when the clock is made.
type clock struct {
	epoch     time.Time
	monoEpoch int64 // CLOCK_MONOTONIC nanoseconds at epoch
}

func newClock() (clock, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return clock{}, fmt.Errorf("reading CLOCK_MONOTONIC: %w", err)
	}
	return clock{epoch: time.Now(), monoEpoch: ts.Nano()}, nil
}

// now is the time since the epoch.
func (c clock) now() time.Duration { return time.Since(c.epoch) }

// mono converts a time since the epoch to a CLOCK_MONOTONIC instant.
func (c clock) mono(t time.Duration) unix.Timespec {
	return unix.NsecToTimespec(c.monoEpoch + int64(t))
}

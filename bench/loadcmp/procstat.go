package loadcmp

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// clockTicks is the unit of the times in /proc/PID/stat, USER_HZ, which
// is 100 on every architecture Go runs Linux on.
const clockTicks = 100

// parseProcStatCPU reads utime and stime, the 14th and 15th fields of a
// /proc/PID/stat line, as one duration. The second field, the command
// name in parentheses, may itself hold spaces and parentheses: the fields
// are counted from the last ')'.
func parseProcStatCPU(stat []byte, ticksPerSecond int64) (time.Duration, error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, errors.New("loadcmp: /proc stat without a command name")
	}
	// After the name: state (3), ppid (4), ..., utime (14), stime (15).
	fields := bytes.Fields(stat[end+1:])
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("loadcmp: /proc stat has %d fields after the name, want more than %d", len(fields), stime)
	}
	var total int64
	for _, i := range []int{utime, stime} {
		v, err := strconv.ParseInt(string(fields[i]), 10, 64)
		if err != nil || v < 0 || v > 1<<40 {
			return 0, fmt.Errorf("loadcmp: /proc stat field %d is %q, not a tick count", i+3, fields[i])
		}
		total += v
	}
	// Seconds first: ticks times a second's nanoseconds overflows from
	// about three years of processor time at 100 ticks a second.
	secs, rest := total/ticksPerSecond, total%ticksPerSecond
	if secs > math.MaxInt64/int64(time.Second)-1 {
		return 0, fmt.Errorf("loadcmp: /proc stat processor time of %d s does not fit a duration", secs)
	}
	return time.Duration(secs)*time.Second + time.Duration(rest)*time.Second/time.Duration(ticksPerSecond), nil
}

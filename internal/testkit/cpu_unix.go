//go:build unix

package testkit

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time, user and system, the process used so far;
// 0 if the system does not say. Benchmarks report CPU per operation
// from the difference of two readings.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

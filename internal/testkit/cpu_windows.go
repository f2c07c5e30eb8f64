//go:build windows

package testkit

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time, user and system, the process used so far;
// 0 if the system does not say. Benchmarks report CPU per operation
// from the difference of two readings.
func ProcessCPU() time.Duration {
	h, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0
	}
	var created, exited, kernel, user syscall.Filetime
	if err := syscall.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return 0
	}
	return filetimeSpan(kernel) + filetimeSpan(user)
}

// filetimeSpan reads a FILETIME that holds a span, in 100 ns units.
func filetimeSpan(f syscall.Filetime) time.Duration {
	return time.Duration(uint64(f.HighDateTime)<<32|uint64(f.LowDateTime)) * 100
}

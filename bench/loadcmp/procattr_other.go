//go:build !linux

package loadcmp

import "syscall"

// childProcAttr: only Linux can tie a child's life to its parent's.
func childProcAttr() *syscall.SysProcAttr { return nil }

//go:build !linux

package bench

import "syscall"

// childProcAttr: elsewhere a child ends when its standard input does.
func childProcAttr() *syscall.SysProcAttr { return nil }

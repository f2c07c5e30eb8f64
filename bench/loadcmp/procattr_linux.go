package loadcmp

import "syscall"

// childProcAttr kills a server when the experiment dies without stopping
// it, so that no server outlives an interrupted run.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

package bench

import "syscall"

// childProcAttr kills a child of the bulk experiment when the experiment
// dies without stopping it, so that no server or busy loop outlives an
// interrupted run.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

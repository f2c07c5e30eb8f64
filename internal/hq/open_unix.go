//go:build unix

package hq

import "syscall"

// openNoBlock makes opening a FIFO return at once (open(2), O_NONBLOCK); it
// changes nothing for regular files and directories.
const openNoBlock = syscall.O_NONBLOCK

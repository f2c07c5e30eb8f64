//go:build unix

package bench

import "golang.org/x/sys/unix"

// kernelVersion is uname's system name, release and version.
func kernelVersion() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:]) +
		" " + unix.ByteSliceToString(u.Version[:])
}

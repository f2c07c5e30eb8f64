package emulate

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// tunDevice is a TUN interface (IP packets, no link-layer header) whose
// packets the emulator reads and writes. It is not persistent: the kernel
// removes the interface when the file closes, so a crashed emulator
// leaves no device behind.
type tunDevice struct {
	name string
	file *os.File
	raw  syscall.RawConn
}

// openTUN creates the TUN interface name in the current thread's network
// namespace.
func openTUN(name string) (*tunDevice, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("opening /dev/net/tun (is the tun module available?): %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("TUN name %q: %w", name, err)
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("creating TUN %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), "/dev/net/tun:"+name)
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("TUN %s: %w", name, err)
	}
	return &tunDevice{name: name, file: f, raw: raw}, nil
}

// fd is the device's descriptor, for a poller; valid until close.
func (t *tunDevice) fd() (int, error) {
	fd := -1
	if err := t.raw.Control(func(s uintptr) { fd = int(s) }); err != nil {
		return -1, err
	}
	return fd, nil
}

// tryReadBatch reads the packets that are ready, up to len(bufs), without
// blocking, and returns their lengths in ns.
func (t *tunDevice) tryReadBatch(bufs [][]byte, ns []int) (int, error) {
	count := 0
	var opErr error
	err := t.raw.Control(func(fd uintptr) {
		for count < len(bufs) {
			n, err := unix.Read(int(fd), bufs[count])
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				if !errors.Is(err, unix.EAGAIN) {
					opErr = err
				}
				return
			}
			ns[count] = n
			count++
		}
	})
	if err != nil {
		return 0, err
	}
	if count > 0 {
		return count, nil
	}
	return 0, opErr
}

// write hands one IP packet to the kernel, as if it arrived on the wire.
func (t *tunDevice) write(p []byte) error {
	var opErr error
	err := t.raw.Write(func(fd uintptr) bool {
		_, opErr = unix.Write(int(fd), p)
		return !errors.Is(opErr, unix.EAGAIN)
	})
	if err != nil {
		return err
	}
	return opErr
}

func (t *tunDevice) close() error { return t.file.Close() }

package rtio

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Poller waits for file descriptors on the calling thread with epoll,
// outside Go's network poller: a thread of the emulator blocks in the
// kernel and is woken directly by the packet or timer it waits for, which
// at high priority takes microseconds. An eventfd interrupts the
// wait when the emulator stops.
type Poller struct {
	epfd   int
	wakefd int
	events [64]unix.EpollEvent
	ready  []uint32
}

// StopToken is reserved for the poller's own eventfd.
const StopToken = ^uint32(0)

func NewPoller() (*Poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create: %w", err)
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	p := &Poller{epfd: epfd, wakefd: wakefd}
	if err := p.Add(wakefd, StopToken); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// Add watches fd for input; Wait reports it by token. It is safe to call
// while another thread waits.
func (p *Poller) Add(fd int, token uint32) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(token)}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl add: %w", err)
	}
	return nil
}

// Remove stops watching fd, which must still be open.
func (p *Poller) Remove(fd int) {
	_ = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, fd, nil)
}

// Wait blocks until a watched descriptor is readable and returns the
// tokens of those that are; stopped reports that Stop was called.
func (p *Poller) Wait() (ready []uint32, stopped bool, err error) {
	for {
		n, err := unix.EpollWait(p.epfd, p.events[:], -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("epoll_wait: %w", err)
		}
		p.ready = p.ready[:0]
		for _, ev := range p.events[:n] {
			token := uint32(ev.Fd)
			if token == StopToken {
				stopped = true
				continue
			}
			p.ready = append(p.ready, token)
		}
		return p.ready, stopped, nil
	}
}

// Stop makes every current and future wait report stopped. It may be
// called from any goroutine.
func (p *Poller) Stop() {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1) // eventfd counters are host-endian
	_, _ = unix.Write(p.wakefd, one[:])
}

// Close releases the poller once no thread waits on it.
func (p *Poller) Close() {
	unix.Close(p.epfd)
	unix.Close(p.wakefd)
}

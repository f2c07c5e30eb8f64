package tunnel

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// addressWait bounds OpenTUN's wait for its addresses to become usable.
const addressWait = 5 * time.Second

// TUNConfig configures OpenTUN.
type TUNConfig struct {
	// Name is the interface's name; empty lets the kernel pick (tun0, ...).
	Name string
	// MTU is the interface MTU: the tunnel's inner MTU, so that the kernel
	// sizes local packets to fit and answers others with ICMP itself. Zero
	// means 1280.
	MTU int
	// Addrs are the interface's addresses: a CONNECT-IP client's assigned
	// prefixes (Session.LocalPrefixes).
	Addrs []netip.Prefix
	// Routes are sent through the interface: a client's advertised routes
	// (IPRoute.RangePrefixes), or on a proxy its clients' addresses.
	Routes []netip.Prefix
	// DisableOffloads opens the interface without TSO, USO and checksum
	// offloads: one packet per read and write.
	DisableOffloads bool
}

// TUN is a Linux TUN interface carrying bare IP packets (IFF_TUN with
// IFF_NO_PI). It is not persistent: the kernel removes it, with its
// addresses and routes, when it is closed or the process ends.
//
// Unless TUNConfig.DisableOffloads, it asks the kernel for offloads
// (IFF_VNET_HDR, then TUNSETOFFLOAD with checksum, TSO for IPv4 and IPv6
// and, where the kernel has it, USO): local TCP then hands the device
// super-packets of up to 64 kB that ReadPackets cuts into packets of the
// MTU (segmenter), and WritePackets joins a batch's consecutive segments
// of a flow into one write (planGRO). A kernel that refuses them leaves
// the interface without (OffloadStats says why).
type TUN struct {
	name string
	mtu  int
	file *os.File
	off  *offload // nil without offloads
	// offMode says why there are none: disabled, or the kernel's refusal.
	offMode string
}

// OpenTUN creates the TUN interface of cfg in the calling thread's network
// namespace and configures it with iproute2's ip command (which must be
// installed; root or CAP_NET_ADMIN is needed): MTU, IPv6 address
// generation off (the tunnel link has no neighbour discovery, RFC 9484
// section 7.1), the addresses, the link up, then the routes. On error
// nothing is left behind.
func OpenTUN(cfg TUNConfig) (*TUN, error) {
	if cfg.MTU <= 0 {
		cfg.MTU = 1280
	}
	ipPath, err := exec.LookPath("ip")
	if err != nil {
		return nil, errors.New("tunnel: the ip command (iproute2) is not installed")
	}
	t, err := createOffloadedTUN(cfg.Name, cfg.MTU, !cfg.DisableOffloads)
	if err != nil {
		return nil, err
	}
	if err := t.configure(ipPath, cfg); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// createTUN opens /dev/net/tun and attaches it to a new interface. The
// descriptor is non-blocking so that Go's poller waits for packets, and
// Close unblocks a pending read.
func createTUN(name string, mtu int, vnetHdr bool) (*TUN, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("tunnel: opening /dev/net/tun (is the tun module loaded, and are we root?): %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("tunnel: TUN name %q: %w", name, err)
	}
	flags := uint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if vnetHdr {
		flags |= unix.IFF_VNET_HDR
	}
	ifr.SetUint16(flags)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("tunnel: creating TUN %q: %w", name, err)
	}
	actual := ifr.Name()
	return &TUN{name: actual, mtu: mtu, file: os.NewFile(uintptr(fd), "/dev/net/tun:"+actual)}, nil
}

func (t *TUN) configure(ipPath string, cfg TUNConfig) error {
	steps := [][]string{{"link", "set", "dev", t.name, "mtu", strconv.Itoa(cfg.MTU), "addrgenmode", "none"}}
	for _, a := range cfg.Addrs {
		step := []string{"addr", "add", a.String(), "dev", t.name}
		if a.Addr().Is6() {
			step = append(step, "nodad")
		}
		steps = append(steps, step)
	}
	steps = append(steps, []string{"link", "set", "dev", t.name, "up"})
	for _, r := range cfg.Routes {
		steps = append(steps, []string{"route", "add", r.Masked().String(), "dev", t.name})
	}
	for _, args := range steps {
		if err := runIP(ipPath, args); err != nil {
			return err
		}
	}
	for _, a := range cfg.Addrs {
		if err := awaitLocal(ipPath, a.Addr()); err != nil {
			return err
		}
	}
	return nil
}

// Reconfigure changes the interface from old, the configuration it has,
// to cfg: a reconnected tunnel's new MTU, addresses and routes. The MTU
// may not exceed the one the interface was opened with (MTU()), which
// sizes the buffers its packets are read into. Routes that go are deleted
// first and those that come added last, around the addresses; what both
// have is left alone, so that the traffic it carries is not disturbed.
func (t *TUN) Reconfigure(old, cfg TUNConfig) error {
	if cfg.MTU <= 0 {
		cfg.MTU = 1280
	}
	if cfg.MTU > t.mtu {
		return fmt.Errorf("tunnel: MTU %d exceeds the %d the interface was opened with", cfg.MTU, t.mtu)
	}
	ipPath, err := exec.LookPath("ip")
	if err != nil {
		return errors.New("tunnel: the ip command (iproute2) is not installed")
	}
	var steps [][]string
	if cfg.MTU != cmp.Or(old.MTU, 1280) {
		steps = append(steps, []string{"link", "set", "dev", t.name, "mtu", strconv.Itoa(cfg.MTU)})
	}
	for _, r := range missingFrom(old.Routes, cfg.Routes) {
		steps = append(steps, []string{"route", "del", r.Masked().String(), "dev", t.name})
	}
	for _, a := range missingFrom(old.Addrs, cfg.Addrs) {
		steps = append(steps, []string{"addr", "del", a.String(), "dev", t.name})
	}
	added := missingFrom(cfg.Addrs, old.Addrs)
	for _, a := range added {
		step := []string{"addr", "add", a.String(), "dev", t.name}
		if a.Addr().Is6() {
			step = append(step, "nodad")
		}
		steps = append(steps, step)
	}
	for _, r := range missingFrom(cfg.Routes, old.Routes) {
		steps = append(steps, []string{"route", "add", r.Masked().String(), "dev", t.name})
	}
	for _, args := range steps {
		if err := runIP(ipPath, args); err != nil {
			return err
		}
	}
	for _, a := range added {
		if err := awaitLocal(ipPath, a.Addr()); err != nil {
			return err
		}
	}
	return nil
}

// missingFrom returns the prefixes of a that b does not hold.
func missingFrom(a, b []netip.Prefix) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range a {
		if !slices.Contains(b, p) {
			out = append(out, p)
		}
	}
	return out
}

// awaitLocal waits until the kernel delivers packets to a locally: an IPv6
// address, even without duplicate address detection, gets its local route
// from a work queue some time after the address appears, and packets to
// it are refused until then.
func awaitLocal(ipPath string, a netip.Addr) error {
	deadline := time.Now().Add(addressWait)
	for {
		out, err := exec.Command(ipPath, "route", "get", a.String()).Output()
		if err == nil && strings.HasPrefix(string(out), "local ") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("tunnel: address %v is not local after %v", a, addressWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runIP runs one ip command and returns its output as the error when it
// fails.
func runIP(ipPath string, args []string) error {
	var out bytes.Buffer
	cmd := exec.Command(ipPath, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("tunnel: ip %s: %s", strings.Join(args, " "), msg)
	}
	return nil
}

// Name is the interface's name.
func (t *TUN) Name() string { return t.name }

// MTU is the interface's MTU.
func (t *TUN) MTU() int { return t.mtu }

// ReadPacket reads one IP packet the kernel routed to the interface.
func (t *TUN) ReadPacket(b []byte) (int, error) {
	if t.off == nil {
		return t.file.Read(b)
	}
	return t.off.readOne(t.file, b)
}

// ReadPackets reads IP packets into bufs, their lengths into sizes, and
// returns how many: with offloads, the segments of one super-packet
// (those that did not fit are returned by the next call); without, one.
// It waits only when it has none to return. Each buf should hold MTU()
// bytes.
func (t *TUN) ReadPackets(bufs [][]byte, sizes []int) (int, error) {
	if t.off == nil {
		n, err := t.file.Read(bufs[0])
		if err != nil {
			return 0, err
		}
		sizes[0] = n
		return 1, nil
	}
	return t.off.read(t.file, bufs, sizes)
}

// WritePacket hands one IP packet to the kernel as if it arrived on the
// interface.
func (t *TUN) WritePacket(p []byte) error {
	if t.off == nil {
		_, err := t.file.Write(p)
		return err
	}
	return t.off.writeOne(t.file, p)
}

// WritePackets hands a batch of IP packets to the kernel: with offloads,
// the consecutive TCP segments of a flow joined into one write. It
// returns how many packets the kernel refused, and the first refusal.
func (t *TUN) WritePackets(pkts [][]byte) (int, error) {
	if t.off == nil {
		failed := 0
		var first error
		for _, p := range pkts {
			if _, err := t.file.Write(p); err != nil {
				failed++
				first = cmp.Or(first, err)
			}
		}
		return failed, first
	}
	return t.off.write(t.file, pkts)
}

// OffloadStats says which offloads the interface has and counts their
// work.
func (t *TUN) OffloadStats() OffloadStats {
	if t.off == nil {
		return OffloadStats{Mode: t.offMode}
	}
	return t.off.snapshot()
}

// Close removes the interface.
func (t *TUN) Close() error { return t.file.Close() }

package tunnel

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
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
}

// TUN is a Linux TUN interface carrying bare IP packets (IFF_TUN with
// IFF_NO_PI). It is not persistent: the kernel removes it, with its
// addresses and routes, when it is closed or the process ends.
type TUN struct {
	name string
	mtu  int
	file *os.File
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
	t, err := createTUN(cfg.Name, cfg.MTU)
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
func createTUN(name string, mtu int) (*TUN, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("tunnel: opening /dev/net/tun (is the tun module loaded, and are we root?): %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("tunnel: TUN name %q: %w", name, err)
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
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
func (t *TUN) ReadPacket(b []byte) (int, error) { return t.file.Read(b) }

// WritePacket hands one IP packet to the kernel as if it arrived on the
// interface.
func (t *TUN) WritePacket(p []byte) error {
	_, err := t.file.Write(p)
	return err
}

// Close removes the interface.
func (t *TUN) Close() error { return t.file.Close() }

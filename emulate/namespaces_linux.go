package emulate

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync"

	"github.com/satquic/satquic/emulate/internal/rtio"
	"github.com/satquic/satquic/netsim"
)

// NamespaceConfig configures namespace mode.
type NamespaceConfig struct {
	// Prefix names the namespaces Prefix-client and Prefix-server; empty
	// means DefaultPrefix.
	Prefix string
	// Up carries client-to-server packets, Down the other way.
	Up, Down netsim.LinkConfig
	// Pcap, when set, is the prefix of the capture files Pcap-up.pcap and
	// Pcap-down.pcap.
	Pcap string
}

// DefaultPrefix is the namespace prefix when none is given.
const DefaultPrefix = "sqc"

// tunName is the TUN device in each namespace; the namespaces keep the two
// apart.
const tunName = "sqc0"

// Side is one end of the emulated link: a namespace, its TUN device, its
// addresses and the peer's.
type Side struct {
	Namespace string
	Device    string
	Addr      netip.Addr // IPv4
	Addr6     netip.Addr
	Peer      netip.Addr
	Peer6     netip.Addr
}

var (
	clientAddrs = [2]netip.Addr{netip.MustParseAddr("10.77.0.1"), netip.MustParseAddr("fd00:77::1")}
	serverAddrs = [2]netip.Addr{netip.MustParseAddr("10.77.0.2"), netip.MustParseAddr("fd00:77::2")}
)

var validPrefix = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_]{0,15}$`)

// Namespaces is a running namespace-mode emulator.
type Namespaces struct {
	cfg            NamespaceConfig
	ip             ipCommand
	lock           *prefixLock
	client, server Side
	created        []string // namespaces to delete on Close
	owned          bool     // the ownership marker is ours to clear

	clk                  rtio.Clock
	clientTun, serverTun *tunDevice
	up, down             *direction
	caps                 *captures
	ingress              []*rtio.Poller // one per TUN reader
	pool                 bufferPool
	wg                   sync.WaitGroup
	once                 sync.Once
	err                  error

	// LeftoverRemoved reports that StartNamespaces found and removed the
	// namespaces of an earlier run that did not clean up.
	LeftoverRemoved bool
}

// StartNamespaces creates the two namespaces and their TUN devices and
// starts carrying packets between them. It needs root, iproute2's ip and
// /dev/net/tun. Every error it returns is about the configuration or the
// environment, and nothing it created is left behind after one.
func StartNamespaces(cfg NamespaceConfig) (*Namespaces, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if err := checkNamespacePrereqs(cfg); err != nil {
		return nil, err
	}
	ip, err := findIP()
	if err != nil {
		return nil, err
	}
	lock, err := lockPrefix(cfg.Prefix)
	if err != nil {
		return nil, err
	}
	n := &Namespaces{cfg: cfg, ip: ip, lock: lock,
		client: newSide(cfg.Prefix+"-client", clientAddrs, serverAddrs),
		server: newSide(cfg.Prefix+"-server", serverAddrs, clientAddrs),
	}
	if err := n.setUp(); err != nil {
		_ = n.tearDown(false)
		return nil, err
	}
	return n, nil
}

func newSide(ns string, own, peer [2]netip.Addr) Side {
	return Side{Namespace: ns, Device: tunName, Addr: own[0], Addr6: own[1], Peer: peer[0], Peer6: peer[1]}
}

func checkNamespacePrereqs(cfg NamespaceConfig) error {
	if !validPrefix.MatchString(cfg.Prefix) {
		return fmt.Errorf("namespace prefix %q: use 1 to 16 letters, digits or '_'", cfg.Prefix)
	}
	for _, c := range []struct {
		name string
		cfg  netsim.LinkConfig
	}{{"uplink", cfg.Up}, {"downlink", cfg.Down}} {
		if err := c.cfg.Validate(); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	if os.Geteuid() != 0 {
		return errors.New("namespace mode needs root (to create namespaces and TUN devices)")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return fmt.Errorf("TUN is not available: %w", err)
	}
	return nil
}

// setUp removes a crashed run's leftovers, then builds everything. On
// error, tearDown undoes whatever was done.
func (n *Namespaces) setUp() error {
	if err := n.removeLeftovers(); err != nil {
		return err
	}
	if err := n.lock.markOwned(); err != nil {
		return err
	}
	n.owned = true
	for _, s := range []Side{n.client, n.server} {
		if err := n.ip.run("netns", "add", s.Namespace); err != nil {
			return err
		}
		n.created = append(n.created, s.Namespace)
	}
	var err error
	if n.clk, err = rtio.NewClock(); err != nil {
		return err
	}
	if n.clientTun, err = n.createTUN(n.client, n.cfg.Up.MTU); err != nil {
		return err
	}
	if n.serverTun, err = n.createTUN(n.server, n.cfg.Down.MTU); err != nil {
		return err
	}
	return n.startForwarding()
}

// removeLeftovers deletes the namespaces of a run that died without
// cleaning up, and refuses to touch namespaces someone else made.
func (n *Namespaces) removeLeftovers() error {
	if n.lock.leftover() {
		for _, s := range []Side{n.client, n.server} {
			if netnsExists(s.Namespace) {
				if err := n.ip.run("netns", "delete", s.Namespace); err != nil {
					return fmt.Errorf("removing a previous run's namespace: %w", err)
				}
				n.LeftoverRemoved = true
			}
		}
		n.lock.clearOwned()
		return nil
	}
	for _, s := range []Side{n.client, n.server} {
		if netnsExists(s.Namespace) {
			return fmt.Errorf("network namespace %s exists but was not made by satquic emulate; remove it (ip netns delete %s) or choose another --name", s.Namespace, s.Namespace)
		}
	}
	return nil
}

// createTUN makes the side's TUN device inside its namespace and gives it
// its addresses. IPv6 address generation is off so that the kernel sends
// no router solicitations or DAD probes across the emulated link.
func (n *Namespaces) createTUN(s Side, mtu int) (*tunDevice, error) {
	if mtu <= 0 {
		mtu = 1500
	}
	var t *tunDevice
	err := inNetns(s.Namespace, func() error {
		var err error
		t, err = openTUN(s.Device)
		return err
	})
	if err != nil {
		return nil, err
	}
	steps := [][]string{
		{"link", "set", "lo", "up"},
		{"link", "set", s.Device, "mtu", strconv.Itoa(mtu), "txqueuelen", "10000", "addrgenmode", "none"},
		{"addr", "add", s.Addr.String(), "peer", s.Peer.String() + "/32", "dev", s.Device},
		{"-6", "addr", "add", s.Addr6.String(), "peer", s.Peer6.String() + "/128", "dev", s.Device, "nodad"},
		{"link", "set", s.Device, "up"},
	}
	for _, args := range steps {
		if err := n.ip.inNS(s.Namespace, args...); err != nil {
			t.close()
			return nil, err
		}
	}
	return t, nil
}

// Client is the client side: its namespace runs the programs that talk to
// the server over the uplink.
func (n *Namespaces) Client() Side { return n.client }

// Server is the server side.
func (n *Namespaces) Server() Side { return n.server }

// Command returns a command that runs name with args inside the side's
// namespace (through ip netns exec).
func (n *Namespaces) Command(s Side, name string, args ...string) *exec.Cmd {
	return exec.Command(n.ip.path, append([]string{"netns", "exec", s.Namespace, name}, args...)...)
}

// Do runs fn on a thread inside the side's namespace: sockets fn opens
// (net.Listen, net.Dial) live there, and may be used from any goroutine
// afterwards.
func (n *Namespaces) Do(s Side, fn func() error) error {
	return inNetns(s.Namespace, fn)
}

// Stats returns a snapshot of the counters.
func (n *Namespaces) Stats() Stats {
	return Stats{
		Mode: "netns", ElapsedS: n.clk.Now().Seconds(), HighPriority: highPriority(n.up, n.down),
		Up: n.up.snapshot(), Down: n.down.snapshot(),
	}
}

// Drops returns the packets the link model dropped so far in both
// directions, in order of time within each, and whether the log filled
// and left later drops out.
func (n *Namespaces) Drops() ([]Drop, bool) {
	up, upFull := n.up.dropsSoFar()
	down, downFull := n.down.dropsSoFar()
	return append(up, down...), upFull || downFull
}

// Close stops forwarding and removes the namespaces, the devices and the
// lock. It is safe to call more than once.
func (n *Namespaces) Close() error {
	n.once.Do(func() { n.err = n.tearDown(true) })
	return n.err
}

// tearDown undoes setUp, as far as it got. The captures are kept after a
// run and removed after a failed start.
func (n *Namespaces) tearDown(keepCaptures bool) error {
	var errs []error
	for _, d := range []*direction{n.up, n.down} {
		if d != nil {
			d.close()
		}
	}
	for _, p := range n.ingress {
		p.Stop()
	}
	n.wg.Wait()
	for _, p := range n.ingress {
		p.Close()
	}
	for _, t := range []*tunDevice{n.clientTun, n.serverTun} {
		if t != nil {
			_ = t.close()
		}
	}
	for _, ns := range n.created {
		if err := n.ip.run("netns", "delete", ns); err != nil {
			errs = append(errs, err)
		}
	}
	// With a namespace left over, the marker stays, so that the next start
	// knows the namespace is a leftover of ours and removes it.
	if n.owned && len(errs) == 0 {
		n.lock.clearOwned()
	}
	n.lock.release()
	switch {
	case n.caps == nil:
	case keepCaptures:
		errs = append(errs, n.caps.close())
	default:
		n.caps.discard()
	}
	return errors.Join(errs...)
}

//go:build linux

package interop

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/satquic/satquic/emulate"
	"github.com/satquic/satquic/interop/capture"
	"github.com/satquic/satquic/netsim"
)

// namespaceNetwork is the emulator's namespace mode: the client and the
// server in two network namespaces joined by the emulated link, which
// carries whole IP packets, ECN codepoints included. The capture is the
// emulator's: what each direction delivered.
type namespaceNetwork struct {
	ns   *emulate.Namespaces
	pcap string
}

// namespacePort is the port servers listen on in their namespace.
const namespacePort = 4433

// namespacesMissing says why namespace mode cannot run here, or returns
// "" when it can.
func namespacesMissing() string {
	if os.Geteuid() != 0 {
		return "needs root: the emulator's namespace mode, the only one that carries ECN codepoints"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "needs iproute2's ip for the emulator's namespace mode"
	}
	return ""
}

func newNamespaceNetwork(dir string, up, down netsim.LinkConfig) (network, error) {
	pcap := filepath.Join(dir, "link")
	ns, err := emulate.StartNamespaces(emulate.NamespaceConfig{Prefix: "sqi", Up: up, Down: down, Pcap: pcap})
	if err != nil {
		return nil, err
	}
	return &namespaceNetwork{ns: ns, pcap: pcap}, nil
}

func (n *namespaceNetwork) host(side emulate.Side) host {
	return host{
		addr: side.Addr,
		command: func(name string, args ...string) *exec.Cmd {
			return n.ns.Command(side, name, args...)
		},
		listenUDP: func(a netip.AddrPort) (*net.UDPConn, error) {
			var c *net.UDPConn
			err := n.ns.Do(side, func() error {
				var err error
				c, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(a))
				return err
			})
			return c, err
		},
	}
}

func (n *namespaceNetwork) clientHost() host   { return n.host(n.ns.Client()) }
func (n *namespaceNetwork) serverHost() host   { return n.host(n.ns.Server()) }
func (n *namespaceNetwork) serverPort() uint16 { return namespacePort }

func (n *namespaceNetwork) connect(addr netip.AddrPort) (netip.AddrPort, error) { return addr, nil }

func (n *namespaceNetwork) finish() ([]capture.Record, string, error) {
	summary := linkSummary(n.ns.Stats())
	if err := n.ns.Close(); err != nil {
		return nil, summary, err
	}
	client := n.ns.Client().Addr
	isClient := func(a netip.AddrPort) bool { return a.Addr() == client }
	var records []capture.Record
	for _, dir := range []string{"up", "down"} {
		data, err := os.ReadFile(n.pcap + "-" + dir + ".pcap")
		if err != nil {
			return nil, summary, err
		}
		r, err := capture.ReadPcap(data, isClient)
		if err != nil {
			return nil, summary, fmt.Errorf("%s capture: %w", dir, err)
		}
		records = append(records, r...)
	}
	slices.SortStableFunc(records, func(a, b capture.Record) int { return a.Time.Compare(b.Time) })
	if len(records) == 0 {
		return nil, summary, errors.New("the link carried no UDP datagram")
	}
	return records, summary, nil
}

package tunnelbench

import (
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
)

// ErrNoLossTool: the kernel refused the XDP loss program and neither nft
// nor iptables is installed, so the kernel cannot be told to drop packets
// on the veth pair.
var ErrNoLossTool = errors.New("no XDP, and neither nft (nftables) nor iptables is installed: no kernel packet loss on the veth pair")

// lossScale is the denominator of nft's random draw: loss is set in
// steps of 0.0001%.
const lossScale = 1_000_000

// kernelLoss drops packets in the kernel, uniformly at random, as they
// arrive on the veth pair in each namespace: both directions lose the
// same share, as the emulator's uniform model did, at the veth's full
// speed. The kernel's draws are not seeded.
type kernelLoss struct {
	tool string // "xdp", "nft" or "iptables"
	path string
}

// findLossTool prefers an XDP program (kernelloss_xdp_linux.go), which
// drops before the receiver's GRO as a lossy link drops before a NIC;
// then nftables (a netdev ingress hook on the veth itself) and iptables'
// statistic match, both after GRO, which therefore runs with GRO off on
// the receiving end.
func findLossTool() (kernelLoss, error) {
	if xdpAvailable() == nil {
		return kernelLoss{tool: "xdp"}, nil
	}
	return findRuleTool()
}

// findRuleTool finds nft, else iptables.
func findRuleTool() (kernelLoss, error) {
	for _, tool := range []string{"nft", "iptables"} {
		if p, err := exec.LookPath(tool); err == nil {
			return kernelLoss{tool: tool, path: p}, nil
		}
	}
	return kernelLoss{}, ErrNoLossTool
}

// describe says how loss is applied, for the output.
func (k kernelLoss) describe(percent float64) string {
	switch k.tool {
	case "xdp":
		return fmt.Sprintf("kernel drop on veth receive before GRO, both directions: XDP program, bpf_get_prandom_u32 < %d (%g%% of 2^32, unseeded); the sending veth cuts GSO batches, the receiving one coalesces what survives (GRO)", xdpThreshold(percent), percent)
	case "nft":
		return fmt.Sprintf("kernel drop on veth ingress, both directions: nft netdev numgen random mod %d < %d (%g%%, unseeded), UDP GSO off on the veth", lossScale, nftThreshold(percent), percent)
	default:
		return fmt.Sprintf("kernel drop on INPUT from the veth, both directions: iptables statistic random probability %s (unseeded), UDP GSO off on the veth", iptablesProbability(percent))
	}
}

// nftThreshold is the draw below which a packet is dropped.
func nftThreshold(percent float64) int64 {
	return int64(math.Round(percent / 100 * lossScale))
}

func iptablesProbability(percent float64) string {
	return strconv.FormatFloat(percent/100, 'f', -1, 64)
}

// nftRuleset is a table of its own with one rule on dev's ingress. It
// draws for IP packets only: the emulator's link carried no ARP, and a
// lost ARP request would stall the link for a second rather than lose a
// packet.
func nftRuleset(dev string, percent float64) string {
	return fmt.Sprintf(`table netdev satquic_loss {
	chain ingress {
		type filter hook ingress device %q priority 0; policy accept;
		meta protocol { ip, ip6 } numgen random mod %d < %d counter drop
	}
}
`, dev, lossScale, nftThreshold(percent))
}

// apply installs the loss on dev in the namespace ns; the function it
// returns removes what must be removed by hand (the XDP program's link),
// the rest going with the namespace.
func (k kernelLoss) apply(ns, dev string, percent float64) (func(), error) {
	if k.tool == "xdp" {
		var a *xdpAttachment
		err := inNamespace(ns, func() (err error) { a, err = attachXDPLoss(dev, percent); return err })
		if err != nil {
			return nil, err
		}
		return func() { _ = a.Close() }, nil
	}
	var cmd *exec.Cmd
	switch k.tool {
	case "nft":
		cmd = exec.Command("ip", "netns", "exec", ns, k.path, "-f", "-")
		cmd.Stdin = strings.NewReader(nftRuleset(dev, percent))
	default:
		cmd = exec.Command("ip", "netns", "exec", ns, k.path, "-w", "-I", "INPUT", "-i", dev,
			"-m", "statistic", "--mode", "random", "--probability", iptablesProbability(percent), "-j", "DROP")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s in %s: %v: %s", k.tool, ns, err, strings.TrimSpace(string(out)))
	}
	return func() {}, nil
}

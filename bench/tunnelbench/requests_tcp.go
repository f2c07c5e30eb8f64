//go:build linux

package tunnelbench

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// InnerTCP counts what one namespace's kernel TCP did to recover from
// loss during a run's requests (/proc/net/snmp and /proc/net/netstat, as
// nstat shows them): the retransmissions a tunnel with FEC should spare
// the programs.
type InnerTCP struct {
	// RetransSegs are the segments sent again (Tcp RetransSegs).
	RetransSegs uint64 `json:"retrans_segs"`
	// Timeouts are the retransmission timeouts that fired (TcpExt
	// TCPTimeouts), at least 200 ms each on Linux; SynRetrans the SYNs
	// sent again (a lost SYN waits 1 s).
	Timeouts   uint64 `json:"timeouts"`
	SynRetrans uint64 `json:"syn_retrans"`
	// LossProbes are tail loss probes (TCPLossProbes), FastRetrans fast
	// retransmissions (TCPFastRetrans), SpuriousRTOs timeouts that F-RTO
	// found needless (TCPSpuriousRTOs).
	LossProbes   uint64 `json:"loss_probes"`
	FastRetrans  uint64 `json:"fast_retrans"`
	SpuriousRTOs uint64 `json:"spurious_rtos"`
}

// fields maps the counters' names in /proc to the fields of c.
func (c *InnerTCP) fields() map[string]*uint64 {
	return map[string]*uint64{
		"Tcp:RetransSegs": &c.RetransSegs, "TcpExt:TCPTimeouts": &c.Timeouts,
		"TcpExt:TCPSynRetrans": &c.SynRetrans, "TcpExt:TCPLossProbes": &c.LossProbes,
		"TcpExt:TCPFastRetrans": &c.FastRetrans, "TcpExt:TCPSpuriousRTOs": &c.SpuriousRTOs,
	}
}

func (c InnerTCP) minus(b InnerTCP) InnerTCP {
	return InnerTCP{
		RetransSegs: c.RetransSegs - b.RetransSegs, Timeouts: c.Timeouts - b.Timeouts,
		SynRetrans: c.SynRetrans - b.SynRetrans, LossProbes: c.LossProbes - b.LossProbes,
		FastRetrans: c.FastRetrans - b.FastRetrans, SpuriousRTOs: c.SpuriousRTOs - b.SpuriousRTOs,
	}
}

// parseInnerTCP adds to c the counters it knows of a /proc/net/snmp or
// /proc/net/netstat file: pairs of lines, a header of names and a line of
// values, each starting with the same "Group:".
func (c *InnerTCP) parse(r io.Reader) error {
	dst := c.fields()
	sc := bufio.NewScanner(r)
	var header []string
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if header == nil || header[0] != fields[0] {
			header = fields
			continue
		}
		if len(fields) != len(header) {
			return fmt.Errorf("%s %d values for %d names", fields[0], len(fields)-1, len(header)-1)
		}
		for i := 1; i < len(fields); i++ {
			p := dst[fields[0]+header[i]]
			if p == nil {
				continue
			}
			v, err := strconv.ParseUint(fields[i], 10, 64)
			if err != nil {
				return fmt.Errorf("%s%s %q: %w", fields[0], header[i], fields[i], err)
			}
			*p = v
		}
		header = nil
	}
	return sc.Err()
}

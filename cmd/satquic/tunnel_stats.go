package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/gateway"
	"github.com/satquic/satquic/tunnel"
)

// tunnelLine is the one-line statistics of --stats and of the end: the
// packets and bytes each way, the drops by reason, FEC's repairs, the RTT
// and the loss rate. extra holds what only one end counts.
// sess sums the CONNECT-IP sessions' counters.
func tunnelLine(st tunnel.Stats, sess connectip.Stats, tr gateway.TransportStats, extra ...string) string {
	var b strings.Builder
	rx := sess.Received
	fmt.Fprintf(&b, "tunnel: out %d pkt %s, in %d pkt %s", st.Tunneled.Packets, humanBytes(int64(st.Tunneled.Bytes)),
		rx.Packets, humanBytes(int64(rx.Bytes)))
	fmt.Fprintf(&b, " | dropped: overload %d, out %s, in %s", st.OverloadDrops, dropsLine(sess.Sent.Dropped), dropsLine(rx.Dropped))
	for _, e := range extra {
		b.WriteString(", ")
		b.WriteString(e)
	}
	fmt.Fprintf(&b, " | fec: repairs sent %d (%.1f%% of the source bytes; on loss %d, capped %d, shed under overload %d), rebuilt here %d, by peer %d",
		tr.RepairsSent, 100*tr.FECOverhead(), tr.LossRepairsSent, tr.RepairsCapped, tr.RepairsShed, tr.Recovered, tr.RecoveredByPeer)
	fmt.Fprintf(&b, " | rtt %.1f ms, loss %.2f%%, datagrams dropped: quic %d, http3 %d", tr.SmoothedRTT.Seconds()*1000, 100*tr.LossRate(), tr.DatagramsDropped, tr.HTTPDatagramsDropped)
	if o := st.Offload; o != nil {
		fmt.Fprintf(&b, " | offloads %s: %d super-packets read, %d segments joined in %d writes", o.Mode, o.SuperPacketsRead, o.CoalescedPackets, o.CoalescedWrites)
	}
	return b.String()
}

// dropsLine lists the non-zero drop counters of one direction.
func dropsLine(d connectip.Drops) string {
	var parts []string
	for _, c := range []struct {
		name string
		n    uint64
	}{
		{"malformed", d.Malformed}, {"source", d.SourceNotAllowed}, {"route", d.DestinationNotRouted},
		{"hop-limit", d.HopLimit}, {"too-big", d.TooBig}, {"context", d.UnknownContext},
	} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c.name, c.n))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " ")
}

// writeTunnelJSON writes v, the final statistics, to path.
func writeTunnelJSON(path string, v any) error {
	if path == "" {
		return nil
	}
	return writeOutput(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

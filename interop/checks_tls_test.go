//go:build linux

package interop

import (
	"strings"
	"testing"

	"github.com/satquic/satquic/interop/capture"
)

// TestZeroRTTProbes: the 0-RTT check says how much of the client's 1-RTT
// data went in path MTU probes, and whether the limit holds without them.
func TestZeroRTTProbes(t *testing.T) {
	packet := func(typ capture.PacketType, payload, padding int, probe bool) *capture.Packet {
		return &capture.Packet{Type: typ, FromClient: true, PayloadLen: payload, Padding: padding, MTUProbe: probe}
	}
	for _, c := range []struct {
		name       string
		rest       int // bytes of the 1-RTT packet that is not a probe
		want, lack string
	}{
		{"probes alone over", 1138, "5316 bytes in 1-RTT packets, more than 5000, 4820 of them PADDING, 4178 in 3 path MTU probes, without which the limit holds", ""},
		{"over without probes", 5138, "9316 bytes in 1-RTT packets, more than 5000, 4820 of them PADDING, 4178 in 3 path MTU probes", "without which"},
	} {
		d := &capture.Datagram{Packets: []*capture.Packet{
			packet(capture.Type0RTT, 9000, 0, false),
			packet(capture.Type1RTT, c.rest, 645, false),
			packet(capture.Type1RTT, 1380, 1379, true),
			packet(capture.Type1RTT, 1418, 1417, true),
			packet(capture.Type1RTT, 1380, 1379, true),
		}}
		reasons := strings.Join(checkZeroRTT(&outcome{a: &capture.Analysis{Datagrams: []*capture.Datagram{d}}}), "; ")
		if !strings.Contains(reasons, c.want) || (c.lack != "" && strings.Contains(reasons, c.lack)) {
			t.Errorf("%s: %q, want %q without %q", c.name, reasons, c.want, c.lack)
		}
	}
}

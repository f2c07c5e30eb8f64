//go:build linux

package interop

import (
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/interop/capture"
)

// TestZeroRTTAnsweredEarly: in the zerortt case satquic's server is an
// early listener, as "satquic serve --0rtt" is, so it answers the
// requests of the second connection, which came in 0-RTT, before the
// client's Finished arrives. The link's delay is raised to 250 ms each
// way, so that the server has half a second to answer.
func TestZeroRTTAnsweredEarly(t *testing.T) {
	testkit.CheckGoroutines(t)
	c := *lookupCase(t, "zerortt")
	c.Link.Delay = 250 * time.Millisecond
	run := runCell(t, &c, &satquicImpl{}, &satquicImpl{})
	if len(run.reasons) > 0 {
		t.Fatalf("zerortt failed: %v", run.reasons)
	}
	conns := run.analysis.Conns
	if len(conns) != 2 {
		t.Fatalf("%d connections in the capture, want 2", len(conns))
	}
	second := conns[1]
	answered := 0 // bytes of the server's 1-RTT packets before the client's Finished
	for _, d := range run.analysis.Datagrams {
		for _, p := range d.Packets {
			if p.Conn != second {
				continue
			}
			if p.FromClient && p.Type == capture.TypeHandshake && p.PayloadLen > ackOnly {
				if want := (zeroRTTFiles - 1) * 32; answered < want {
					t.Fatalf("the server sent %d bytes in 1-RTT packets before the client's Finished, want the %d bytes of the files at least", answered, want)
				}
				return
			}
			if !p.FromClient && p.Type == capture.Type1RTT {
				answered += p.PayloadLen
			}
		}
	}
	t.Fatal("no Finished from the client in the second connection")
}

// ackOnly is the most a Handshake packet holding a lone ACK frame carries.
const ackOnly = 8

package quic

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/netsim"
)

// A download with CongestionControl BBR at both ends, over a link that
// loses 1% of the packets: the data arrive whole, and the server's Stats
// name the controller and BBR's state, past Startup by then.
func TestBBRDownload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := netsim.LinkConfig{RateBps: 50e6, Delay: 25 * time.Millisecond, Loss: "uniform:0.01"}
		e := newMemEnv(t, link, &Config{CongestionControl: BBR})
		c, s := e.connect(&Config{CongestionControl: BBR})
		const size = 5 << 20
		data := testkit.Payload(size, 13)
		go func() {
			st, err := s.OpenUniStream()
			if err != nil {
				return
			}
			_, _ = st.Write(data)
			_ = st.Close()
		}()
		st, err := c.AcceptUniStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n, got, err := testkit.ReadAllSum(st)
		if err != nil || n != size || got != sum(data) {
			t.Fatalf("%d of %d bytes, err %v", n, size, err)
		}
		ss := s.Stats()
		if ss.CongestionControl != "bbr" || ss.BBRState == "" || ss.BBRState == "startup" {
			t.Errorf("server controller %q, state %q, BBR state %q", ss.CongestionControl, ss.CongestionState, ss.BBRState)
		}
		if cs := c.Stats(); cs.CongestionControl != "bbr" {
			t.Errorf("client controller %q", cs.CongestionControl)
		}
		_ = c.CloseWithError(0, "")
	})
}

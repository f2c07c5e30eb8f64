package quic

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/congestion"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// fixedWindow is a controller with a constant window that counts the
// ACKs it is told of, and panics on the ACK numbered panicAt (never if 0).
type fixedWindow struct {
	window, acks, panicAt int
}

func (f *fixedWindow) OnPacketSent(time.Duration, int, int64) {}
func (f *fixedWindow) OnAck(time.Duration, *congestion.AckEvent) {
	f.acks++
	if f.acks == f.panicAt {
		panic("window lost")
	}
}
func (f *fixedWindow) OnCongestionEvent(time.Duration, *congestion.CongestionEvent) {}
func (f *fixedWindow) Window() int                                                  { return f.window }
func (f *fixedWindow) PacingRate(congestion.RTT) uint64                             { return 0 }
func (f *fixedWindow) InSlowStart() bool                                            { return false }
func (f *fixedWindow) SetMaxDatagramSize(int)                                       {}
func (f *fixedWindow) State() congestion.State {
	return congestion.State{Name: "fixed", Phase: "steady", Window: f.window}
}

// NewCongestionController reaches loss recovery as its custom controller,
// and cannot be combined with CongestionControl.
func TestConfigNewCongestionController(t *testing.T) {
	f := &fixedWindow{window: 1}
	newCC := func() congestion.Controller { return f }
	cc, err := (&Config{NewCongestionController: newCC}).coreConfig(clientTLS())
	if err != nil || cc.Recovery.Algorithm != recovery.Custom || cc.Recovery.Custom == nil || cc.Recovery.Custom.New() != f {
		t.Errorf("custom controller: %+v, %v", cc.Recovery, err)
	}
	for _, name := range []string{CUBIC, NewReno, BBR, "vegas"} {
		_, err := (&Config{CongestionControl: name, NewCongestionController: newCC}).coreConfig(clientTLS())
		if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), "both set") {
			t.Errorf("CongestionControl %q with NewCongestionController: %v", name, err)
		}
	}
}

// startDownload serves size bytes on a unidirectional stream from s and
// reads them at c.
func startDownload(t *testing.T, c, s *Conn, size int) (int64, error) {
	data := testkit.Payload(size, 21)
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
		return 0, err
	}
	n, got, err := testkit.ReadAllSum(st)
	if err == nil && (n != int64(size) || got != sum(data)) {
		t.Fatalf("%d of %d bytes, or not the data sent", n, size)
	}
	return n, err
}

// A server whose controller is the application's: the download completes,
// the window is the controller's, and Stats name it and its phase.
func TestCustomControllerDownload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := netsim.LinkConfig{RateBps: 20e6, Delay: 25 * time.Millisecond, Loss: "uniform:0.01"}
		f := &fixedWindow{window: 60_000}
		e := newMemEnv(t, link, &Config{NewCongestionController: func() congestion.Controller { return f }})
		c, s := e.connect(nil)
		if _, err := startDownload(t, c, s, 2<<20); err != nil {
			t.Fatal(err)
		}
		ss := s.Stats()
		if ss.CongestionControl != "fixed" || ss.CongestionState != "steady" || ss.CongestionWindow != 60_000 || f.acks == 0 {
			t.Errorf("server controller %q in %q, window %d, %d ACKs", ss.CongestionControl, ss.CongestionState, ss.CongestionWindow, f.acks)
		}
		if cs := c.Stats(); cs.CongestionControl != DefaultCongestionControl {
			t.Errorf("client controller %q", cs.CongestionControl)
		}
		_ = c.CloseWithError(0, "")
	})
}

// A controller that panics closes its connection with INTERNAL_ERROR: the
// program goes on, the peer learns why, and the reader gets an error.
func TestCustomControllerPanicClosesConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := netsim.LinkConfig{RateBps: 20e6, Delay: 25 * time.Millisecond}
		f := &fixedWindow{window: 60_000, panicAt: 20}
		e := newMemEnv(t, link, &Config{NewCongestionController: func() congestion.Controller { return f }})
		c, s := e.connect(nil)
		_, err := startDownload(t, c, s, 2<<20)
		var te *TransportError
		if !errors.As(err, &te) || !te.Remote || te.ErrorCode != 0x1 ||
			!strings.Contains(te.ErrorMessage, "congestion controller panicked in OnAck: window lost") {
			t.Fatalf("client read: %v", err)
		}
		<-s.Context().Done()
		if !errors.As(context.Cause(s.Context()), &te) || te.Remote || te.ErrorCode != 0x1 {
			t.Errorf("server closed with %v", context.Cause(s.Context()))
		}
		// The minimum window: two packets of the size path MTU discovery
		// reached, 1200 to 1452 bytes.
		if st := s.Stats(); st.CongestionState != "failed" || st.CongestionWindow < 2*1200 || st.CongestionWindow > 2*1452 {
			t.Errorf("server controller in %q, window %d after the panic", st.CongestionState, st.CongestionWindow)
		}
	})
}

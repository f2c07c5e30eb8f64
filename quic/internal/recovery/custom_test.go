package recovery

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/congestion"
	"github.com/satquic/satquic/quic/internal/wire"
)

// fakeController answers what its fields say, keeps copies of the events
// it was given, and panics in the method named by panicIn.
type fakeController struct {
	window  int
	rate    uint64
	state   congestion.State
	panicIn string

	sent    int
	ack     congestion.AckEvent
	acked   []congestion.AckedPacket
	acks    int
	cev     congestion.CongestionEvent
	events  int
	lastRTT congestion.RTT
	mds     int
}

func (f *fakeController) maybePanic(method string) {
	if f.panicIn == method {
		panic("fake " + method)
	}
}

func (f *fakeController) OnPacketSent(time.Duration, int, int64) {
	f.maybePanic("OnPacketSent")
	f.sent++
}

func (f *fakeController) OnAck(_ time.Duration, ev *congestion.AckEvent) {
	f.maybePanic("OnAck")
	f.acks++
	f.ack = *ev
	f.acked = append(f.acked[:0], ev.Acked...)
}

func (f *fakeController) OnCongestionEvent(_ time.Duration, ev *congestion.CongestionEvent) {
	f.maybePanic("OnCongestionEvent")
	f.events++
	f.cev = *ev
}

func (f *fakeController) Window() int {
	f.maybePanic("Window")
	return f.window
}

func (f *fakeController) PacingRate(rtt congestion.RTT) uint64 {
	f.maybePanic("PacingRate")
	f.lastRTT = rtt
	return f.rate
}

func (f *fakeController) InSlowStart() bool {
	f.maybePanic("InSlowStart")
	return true
}

func (f *fakeController) SetMaxDatagramSize(n int) {
	f.maybePanic("SetMaxDatagramSize")
	f.mds = n
}

func (f *fakeController) State() congestion.State {
	f.maybePanic("State")
	return f.state
}

func customConfig(f *fakeController) Config {
	cfg := testConfig(CUBIC)
	cfg.Custom = &CustomController{New: func() congestion.Controller { return f }}
	return cfg
}

// The events reach a custom controller converted: only in-flight packets,
// the RTT as it is after the ACK, the rate sample, the loss with its
// cause and the send time of the newest lost packet.
func TestCustomControllerEvents(t *testing.T) {
	f := &fakeController{window: 100_000}
	s := confirmed(t, customConfig(f))
	for pn := range uint64(5) {
		send(t, s, time.Duration(pn)*ms, SpaceApplication, pn)
	}
	// An ACK-only packet: recorded, not in flight.
	if err := s.OnPacketSent(5*ms, SentPacket{Space: SpaceApplication, Number: 5, Bytes: 50}); err != nil {
		t.Fatal(err)
	}
	ack(t, s, 105*ms, SpaceApplication, 0, rng(1, 5))
	if f.sent != 5 || f.acks != 1 || f.events != 1 {
		t.Fatalf("%d sent, %d ACKs, %d congestion events; want 5, 1, 1", f.sent, f.acks, f.events)
	}
	if len(f.acked) != 4 || f.acked[0].Number != 1 || f.acked[3].Number != 4 || f.acked[3].TimeSent != 4*ms || f.acked[0].Bytes != 1200 {
		t.Errorf("acked %+v, want packets 1-4 of 1200 bytes", f.acked)
	}
	ev := &f.ack
	if ev.AckedBytes != 4800 || ev.PriorInFlight != 6000 || ev.BytesInFlight != 0 || ev.Delivered != 4800 || !ev.RTTUpdated {
		t.Errorf("ACK event %+v", ev)
	}
	if ev.RTT.Latest != 100*ms || ev.RTT.Min != 100*ms || ev.RTT.Smoothed != 100*ms || ev.RTT.Var != 50*ms || !ev.RTT.HasSample {
		t.Errorf("RTT %+v, want the first sample, 100 ms", ev.RTT)
	}
	if !ev.Rate.HasData || ev.Rate.NewlyAcked != 4800 || ev.Rate.NewlyLost != 1200 || ev.Rate.RTT != 101*ms {
		t.Errorf("rate sample %+v", ev.Rate)
	}
	// Packet 0 is three packets below the largest acknowledged (RFC 9002
	// section 6.1.1): lost, before the ACK's growth is reported.
	// The acknowledged packets left the flight first.
	cev := &f.cev
	if cev.Cause != congestion.CauseLoss || cev.LostBytes != 1200 || cev.LargestSentTime != 0 || cev.Persistent ||
		cev.PriorInFlight != 1200 || cev.BytesInFlight != 0 {
		t.Errorf("congestion event %+v", cev)
	}
	if cev.Cause.String() != "loss" || congestion.CauseECN.String() != "ecn" || congestion.CauseFECRecovered.String() != "fec_recovered" {
		t.Errorf("cause names %v %v %v", cev.Cause, congestion.CauseECN, congestion.CauseFECRecovered)
	}
	if err := s.SetMaxDatagramSize(1452); err != nil || f.mds != 1452 {
		t.Errorf("SetMaxDatagramSize: %v, controller has %d", err, f.mds)
	}
}

// The Sender bounds what a custom controller answers: the window to
// [minimum window, MaxWindow], the pacing rate to at least the minimum
// window per smoothed RTT, and zero to the window's rate.
func TestCustomControllerBounds(t *testing.T) {
	f := &fakeController{}
	cfg := customConfig(f)
	cfg.Pacing.Disabled = false
	cfg.MaxWindow = 1 << 20
	s := newSender(t, cfg)
	srtt := s.RTT().SmoothedRTT()
	for _, c := range []struct {
		window, want int
	}{{0, 2400}, {-5, 2400}, {2401, 2401}, {1 << 40, 1 << 20}} {
		f.window = c.window
		if got := s.CongestionWindow(); got != c.want {
			t.Errorf("window %d: the Sender uses %d, want %d", c.window, got, c.want)
		}
	}
	f.window = 0
	if !s.CanSend() || s.SendWindow() != 2400 {
		t.Errorf("zero window: CanSend %v, SendWindow %d: the minimum window must stay open", s.CanSend(), s.SendWindow())
	}
	f.window = 120_000
	for _, c := range []struct {
		rate, want uint64
	}{
		{0, windowRate(120_000, srtt, 1.25)},
		{1, windowRate(2400, srtt, 1)},
		{5_000_000, 5_000_000},
		{^uint64(0), ^uint64(0)},
	} {
		f.rate = c.rate
		if got := s.PacingRate(); got != c.want {
			t.Errorf("pacing rate %d: the Sender uses %d, want %d", c.rate, got, c.want)
		}
	}
	if f.lastRTT.Smoothed != srtt || f.lastRTT.HasSample {
		t.Errorf("PacingRate was given %+v, want the initial estimate", f.lastRTT)
	}
	// A huge rate lets the window out as one burst, never more.
	f.rate = ^uint64(0)
	for pn := range uint64(100) {
		if !s.CanSend() {
			break
		}
		if next := s.NextSendTime(0, 1200); next != 0 {
			t.Fatalf("packet %d paced to %v under an unbounded rate", pn, next)
		}
		send(t, s, 0, SpaceInitial, pn)
	}
	if s.BytesInFlight() != 120_000 {
		t.Errorf("%d bytes in flight, want the window, 120000", s.BytesInFlight())
	}
}

// State reports a custom controller's names, its window as the Sender uses
// it and no slow start threshold when it gives none.
func TestCustomControllerState(t *testing.T) {
	f := &fakeController{window: 50_000, state: congestion.State{Name: "vegas", Phase: "probing", Window: 50_000, Reductions: 2, RecoveryStart: 7 * ms}}
	s := newSender(t, customConfig(f))
	st := s.ControllerState()
	if st.Algorithm != Custom || st.AlgorithmName() != "vegas" || st.PhaseName() != "probing" || st.Phase != PhaseOther ||
		st.Window != 50_000 || st.SSThresh != InfiniteSSThresh || st.Reductions != 2 || st.RecoveryStart != 7*ms {
		t.Errorf("state %+v", st)
	}
	f.state = congestion.State{Phase: congestion.PhaseCongestionAvoidance, SSThresh: 30_000}
	st = s.ControllerState()
	if st.AlgorithmName() != "vegas" || st.Phase != PhaseCongestionAvoidance || st.PhaseName() != "congestion_avoidance" || st.SSThresh != 30_000 {
		t.Errorf("state %+v: a name given once is kept, a built-in phase maps to its Phase", st)
	}
	unnamed := newSender(t, customConfig(&fakeController{}))
	if st := unnamed.ControllerState(); st.AlgorithmName() != "custom" {
		t.Errorf("unnamed controller named %q", st.AlgorithmName())
	}
	if cubic := newSender(t, testConfig(CUBIC)); cubic.ControllerState().AlgorithmName() != "cubic" || cubic.ControllerError() != nil {
		t.Error("a built-in controller is named by its Algorithm and never fails")
	}
}

// A panic in any method of a custom controller is recovered: the
// controller is not called again, the window is the minimum, State says
// "failed", and ControllerError names the method and the panic.
func TestCustomControllerPanic(t *testing.T) {
	for _, method := range []string{"OnPacketSent", "OnAck", "OnCongestionEvent", "Window", "PacingRate", "InSlowStart", "SetMaxDatagramSize", "State"} {
		f := &fakeController{window: 100_000, state: congestion.State{Name: "fragile"}}
		cfg := customConfig(f)
		cfg.Pacing.Disabled = false
		s := confirmed(t, cfg)
		f.panicIn = method
		for pn := range uint64(5) {
			send(t, s, 0, SpaceApplication, pn)
		}
		ack(t, s, 100*ms, SpaceApplication, 0, rng(1, 4))
		_ = s.PacingRate()
		_ = s.InSlowStart()
		_ = s.ControllerState()
		if err := s.SetMaxDatagramSize(1300); err != nil {
			t.Fatal(err)
		}
		err := s.ControllerError()
		if !errors.Is(err, ErrControllerPanic) || !strings.Contains(err.Error(), "in "+method+": fake "+method) {
			t.Errorf("%s: error %v", method, err)
			continue
		}
		calls := f.sent + f.acks + f.events
		f.panicIn = ""
		send(t, s, 200*ms, SpaceApplication, 5)
		ack(t, s, 300*ms, SpaceApplication, 0, rng(0, 5))
		if f.sent+f.acks+f.events != calls {
			t.Errorf("%s: the controller was called after its panic", method)
		}
		st := s.ControllerState()
		if s.CongestionWindow() != 2600 || st.PhaseName() != "failed" || st.AlgorithmName() != "fragile" || s.InSlowStart() {
			t.Errorf("%s: after the panic, window %d, state %+v", method, s.CongestionWindow(), st)
		}
	}
}

// A Custom that is missing, makes nothing or panics is a configuration
// error, not a Sender with no controller.
func TestCustomControllerConfig(t *testing.T) {
	cfg := testConfig(CUBIC)
	cfg.Custom = &CustomController{}
	if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Custom without New: %v", err)
	}
	cfg.Custom = &CustomController{New: func() congestion.Controller { return nil }}
	if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Custom.New making nil: %v", err)
	}
	cfg.Custom = &CustomController{New: func() congestion.Controller { panic("no") }}
	if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) || !errors.Is(err, ErrControllerPanic) {
		t.Errorf("Custom.New panicking: %v", err)
	}
	cfg.Custom, cfg.Algorithm = nil, Custom
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "Algorithm Custom needs Custom") {
		t.Errorf("Algorithm Custom without Custom: %v", err)
	}
	// Algorithm is ignored, even BBR's checks or an unknown value.
	cfg.Custom = &CustomController{New: func() congestion.Controller { return &fakeController{} }}
	cfg.Algorithm = 99
	if _, err := New(cfg); err != nil {
		t.Errorf("Custom with another Algorithm: %v", err)
	}
	if Custom.String() != "custom" || PhaseOther.String() != "other" {
		t.Errorf("names %q %q", Custom, PhaseOther)
	}
}

// An ACK handed to a custom controller allocates nothing once the
// buffers have grown: 1000 packets in flight, one acknowledged per ACK,
// one in a hundred lost.
func TestCustomControllerDoesNotAllocate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Custom = &CustomController{New: func() congestion.Controller { return &fakeController{window: 2 << 20} }}
	a := &ackBench{s: confirmed(t, cfg), ranges: make([]wire.AckRange, 0, 64)}
	for range 1000 {
		a.send(t)
	}
	for range 20000 {
		a.step(t, 100)
	}
	if n := testing.AllocsPerRun(1000, func() { a.step(t, 100) }); n != 0 {
		t.Fatalf("%v allocations per ACK", n)
	}
}

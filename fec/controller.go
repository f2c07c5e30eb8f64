package fec

// A redundancy controller decides, for the sliding-window RLC encoder, when
// a repair symbol is sent and how many of the most recent source symbols it
// covers. It counts packets, not time: the tunnel feeds it the receiver's
// Feedback reports, and the QUIC transport can feed it the same reports
// built from its ACK frames. Three controllers exist:
//
//   - FixedController: k source : r repair, spread evenly (no feedback);
//   - HIRTController: the rule of HIRT's simulator (seed 002, section IV);
//   - AdaptiveController: satquic's own rule, see controller_adaptive.go.

// Controller is the policy half of the RLC SchemeEncoder. The encoder calls
// OnSource after each source symbol and OnFeedback for each receiver
// report, sends as many repairs as they return, and builds each repair over
// the last Window() source symbols.
type Controller interface {
	// OnSource tells the controller that the source symbol esi was just
	// added to the encoder. It returns the number of repairs to send
	// right after it.
	OnSource(esi uint32) int
	// OnFeedback hands the controller a receiver report. It returns the
	// number of repairs to send now (a reaction to a loss), often 0.
	OnFeedback(fb Feedback) int
	// Window is the number of most recent source symbols the next repair
	// covers (at least 1).
	Window() int
	// FeedbackPolicy says which reports the controller wants from the
	// receiver's LossMonitor. The zero policy means no feedback at all.
	FeedbackPolicy() FeedbackPolicy
}

// FeedbackPolicy is what a controller asks of the receiver's loss monitor
// (see MonitorConfig).
type FeedbackPolicy struct {
	// Interval asks for a report every Interval source ESIs; 0 asks for
	// no periodic report.
	Interval int
	// OnLossRun asks for a report as soon as a run of lost source ESIs
	// ends (the next source arrives), so that a controller can react
	// within one round trip instead of one interval.
	OnLossRun bool
	// Horizon is how many source ESIs back a lost source still matters to
	// the controller (its largest window): older losses are given up and
	// no longer reported as unrecovered. 0 leaves the monitor's default.
	Horizon int
}

// Wants reports whether the policy asks for any feedback at all.
func (p FeedbackPolicy) Wants() bool { return p.Interval > 0 || p.OnLossRun }

// controllerWindowLimit is the largest window a Repair FEC Payload ID can
// name: NSS is a 12-bit field (RFC 8681 section 4.1.3).
const controllerWindowLimit = 4095

// clamped returns the report with its counts forced into their possible
// ranges (0 <= Lost <= Sources, 0 <= Bursts <= Lost, ...). Reports come
// from the network: a corrupt or hostile one must not drive a controller's
// arithmetic to NaN or to absurd rates.
func (f Feedback) clamped() Feedback {
	f.Sources = max(f.Sources, 0)
	f.Lost = min(max(f.Lost, 0), f.Sources)
	f.Recovered = min(max(f.Recovered, 0), f.Lost)
	f.Bursts = min(max(f.Bursts, 0), f.Lost)
	f.MaxBurst = min(max(f.MaxBurst, 0), f.Lost)
	f.Unrecovered = max(f.Unrecovered, 0)
	return f
}

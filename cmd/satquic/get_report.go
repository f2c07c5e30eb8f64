package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// getFile is one download.
type getFile struct {
	URL    string `json:"url"`
	Output string `json:"output,omitempty"`
	// Status is the HTTP status of an HTTP/3 response (hq-interop has
	// none).
	Status  int     `json:"status,omitempty"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`

	path string
	// done: the body arrived whole (the output may be renamed into
	// place).
	done bool
}

// getReport is the summary, printed as text or JSON.
type getReport struct {
	Server string `json:"server"`
	// Protocol is the application protocol the server chose: "h3" or
	// "hq-interop".
	Protocol      string     `json:"protocol"`
	Files         []*getFile `json:"files"`
	Bytes         int64      `json:"bytes"`
	Seconds       float64    `json:"seconds"`
	GoodputMbps   float64    `json:"goodput_mbps"`
	HandshakeMs   float64    `json:"handshake_ms"`
	SmoothedRTTMs float64    `json:"smoothed_rtt_ms"`
	MinRTTMs      float64    `json:"min_rtt_ms"`
	PacketsSent   uint64     `json:"packets_sent"`
	PacketsRecv   uint64     `json:"packets_received"`
	PacketsLost   uint64     `json:"packets_lost"`
	Retransmitted uint64     `json:"packets_retransmitted"`
	Version       string     `json:"quic_version"`
	CipherSuite   string     `json:"cipher_suite"`
	// Session says whether the TLS session was new or resumed, and what
	// became of 0-RTT.
	Session  string `json:"session"`
	Resumed  bool   `json:"resumed"`
	Used0RTT bool   `json:"used_0rtt"`
	// PathStates counts the Careful Resume path states the server sent,
	// kept with the session ticket; PathStateReturned: this connection
	// returned the one its ticket held.
	PathStates        uint64 `json:"path_states_received"`
	PathStateReturned bool   `json:"path_state_returned"`
	// Resumption is the report of the second connection of --resume.
	Resumption *getReport `json:"resumption,omitempty"`
}

// Sessions as the report names them.
const (
	sessionNew         = "new"
	sessionNotResumed  = "new (the server did not resume the session)"
	sessionResumed     = "resumed"
	session0RTT        = "resumed, 0-RTT accepted"
	session0RTTRefused = "resumed, 0-RTT rejected"
)

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}

func printGetReport(w io.Writer, r *getReport) {
	for _, f := range r.Files {
		status := "ok"
		if f.Error != "" {
			status = f.Error
		}
		dest := f.Output
		if dest == "" {
			dest = "-"
		}
		fmt.Fprintf(w, "%s -> %s: %d bytes (%s)\n", f.URL, dest, f.Bytes, status)
	}
	fmt.Fprintf(w, "%d bytes (%s) in %.3f s: %.1f Mbit/s\n", r.Bytes, humanBytes(r.Bytes), r.Seconds, r.GoodputMbps)
	fmt.Fprintf(w, "handshake %.1f ms, RTT %.1f ms (min %.1f ms), %d packets received, %d sent, %d lost, %d retransmitted (%s over QUIC %s, %s)\n",
		r.HandshakeMs, r.SmoothedRTTMs, r.MinRTTMs, r.PacketsRecv, r.PacketsSent, r.PacketsLost, r.Retransmitted, r.Protocol, r.Version, r.CipherSuite)
	fmt.Fprintf(w, "session: %s\n", r.Session)
	if r.PathStates > 0 || r.PathStateReturned {
		fmt.Fprintf(w, "careful resume: %s\n", carefulResumeNote(r))
	}
	if r.Resumption != nil {
		fmt.Fprintln(w, "second connection:")
		printGetReport(w, r.Resumption)
	}
}

// carefulResumeNote says what the connection did with Careful Resume's
// path states.
func carefulResumeNote(r *getReport) string {
	var parts []string
	if r.PathStateReturned {
		parts = append(parts, "the saved path state returned to the server")
	}
	if r.PathStates > 0 {
		parts = append(parts, fmt.Sprintf("%d path state(s) received and kept with the session ticket", r.PathStates))
	}
	return strings.Join(parts, "; ")
}

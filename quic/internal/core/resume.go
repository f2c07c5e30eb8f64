package core

import (
	"bytes"
	"crypto/tls"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// Session tickets carry what a resumed connection needs beyond TLS, in
// SessionState.Extra entries that start with a tag (other entries, an
// application's, are left alone):
//   - the client's entry keeps the server's transport parameters that
//     limit 0-RTT data (RFC 9000 section 7.4.1) and the smoothed RTT, for
//     the next connection's first RTT estimate (RFC 9002 section 6.2.2);
//   - the server's entry, sealed in its ticket, keeps its own parameters,
//     so that it declines 0-RTT when it can no longer honor them.
//
// Both hold the QUIC version: 0-RTT is only used on the version that
// issued the ticket.
var (
	extraTagClient = []byte("satquic/resume-client/1\x00")
	extraTagServer = []byte("satquic/resume-server/1\x00")
)

// resumeInfo is the content of an Extra entry.
type resumeInfo struct {
	version wire.Version
	rtt     time.Duration
	params  wire.TransportParameters
}

// resumeFields are the remembered parameters, in their encoding order.
func resumeFields(p *wire.TransportParameters) []*uint64 {
	return []*uint64{
		&p.ActiveConnectionIDLimit, &p.InitialMaxData,
		&p.InitialMaxStreamDataBidiLocal, &p.InitialMaxStreamDataBidiRemote, &p.InitialMaxStreamDataUni,
		&p.InitialMaxStreamsBidi, &p.InitialMaxStreamsUni, &p.MaxDatagramFrameSize,
	}
}

// appendResumeInfo encodes an Extra entry: tag, version, RTT in
// microseconds, then the parameters, as varints.
func appendResumeInfo(tag []byte, r *resumeInfo) []byte {
	b := append([]byte(nil), tag...)
	b, _ = wire.AppendVarint(b, uint64(r.version))
	b, _ = wire.AppendVarint(b, uint64(max(r.rtt, 0)/time.Microsecond)&wire.MaxVarint)
	for _, f := range resumeFields(&r.params) {
		b, _ = wire.AppendVarint(b, min(*f, wire.MaxVarint))
	}
	return b
}

// findResumeInfo decodes the entry with tag among extra; a malformed entry
// counts as none.
func findResumeInfo(extra [][]byte, tag []byte) (resumeInfo, bool) {
	for _, e := range extra {
		if !bytes.HasPrefix(e, tag) {
			continue
		}
		b := e[len(tag):]
		var vals [10]uint64
		ok := true
		for i := range vals {
			v, n, err := wire.ParseVarint(b)
			if err != nil {
				ok = false
				break
			}
			vals[i], b = v, b[n:]
		}
		if !ok || len(b) != 0 || vals[0] > 0xffffffff {
			return resumeInfo{}, false
		}
		r := resumeInfo{version: wire.Version(vals[0]), rtt: time.Duration(min(vals[1], uint64(time.Hour/time.Microsecond))) * time.Microsecond}
		r.params = wire.DefaultTransportParameters()
		for i, f := range resumeFields(&r.params) {
			*f = vals[2+i]
		}
		return r, true
	}
	return resumeInfo{}, false
}

// withoutTag returns extra without the entries that start with tag.
func withoutTag(extra [][]byte, tag []byte) [][]byte {
	out := make([][]byte, 0, len(extra)+1)
	for _, e := range extra {
		if !bytes.HasPrefix(e, tag) {
			out = append(out, e)
		}
	}
	return out
}

// clientResumeInfo is the resumption entry of a client's session ticket
// from a server of version v: its transport parameters peer and, once
// measured, the smoothed RTT of rtt.
func clientResumeInfo(v wire.Version, peer *wire.TransportParameters, rtt *recovery.RTTStats) resumeInfo {
	r := resumeInfo{version: v, params: *peer}
	if rtt.HasSample() {
		r.rtt = rtt.SmoothedRTT()
	}
	return r
}

// onResumeSession takes what a session s remembers, at a client that
// resumes it or a server asked to resume it, on a connection of version v
// where allow0RTT is Config.Allow0RTT (false once the version changed). A
// client takes the server's remembered parameters for 0-RTT data (RFC 9000
// section 7.4.1) if it is allowed and the ticket is of version v, and
// declines 0-RTT otherwise; it returns the remembered RTT, 0 if none, its
// first estimate with Config.ResumeRTT (RFC 9002 section 6.2.2). A server
// declines 0-RTT unless it is allowed and its ticket still holds with its
// transport parameters local (honorsTicket).
func (e *earlyState) onResumeSession(s *tls.SessionState, isClient, allow0RTT bool, v wire.Version, local *wire.TransportParameters) time.Duration {
	if s == nil {
		return 0
	}
	if !isClient {
		if !allow0RTT || !honorsTicket(s.Extra, v, local) {
			s.EarlyData = false
		}
		return 0
	}
	r, ok := findResumeInfo(s.Extra, extraTagClient)
	if !ok || !allow0RTT || r.version != v {
		s.EarlyData = false
		return r.rtt
	}
	e.params, e.haveParams = r.params, true
	return r.rtt
}

// honorsTicket reports whether a server can accept 0-RTT data on the
// session of a ticket it issued with extra: the same version, and limits
// no lower than those it remembered (RFC 9000 section 7.4.1).
func honorsTicket(extra [][]byte, v wire.Version, local *wire.TransportParameters) bool {
	r, ok := findResumeInfo(extra, extraTagServer)
	if !ok || r.version != v {
		return false
	}
	_, reduced := reducedLimit(&r.params, local)
	return !reduced
}

// serverTicketOptions are the options of a server's session ticket: 0-RTT
// when allowed (Config.Allow0RTT), and the server's resumption entry.
func serverTicketOptions(allow0RTT bool, v wire.Version, local *wire.TransportParameters) tls.QUICSessionTicketOptions {
	r := resumeInfo{version: v, params: *local}
	return tls.QUICSessionTicketOptions{
		EarlyData: allow0RTT,
		Extra:     [][]byte{appendResumeInfo(extraTagServer, &r)},
	}
}

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
//     so that it declines 0-RTT when it can no longer honor them;
//   - the client's BDP entry keeps the latest sealed path state the server
//     sent in a BDP frame (bdp.go), returned unread on the next
//     connection.
//
// The first two hold the QUIC version: 0-RTT is only used on the version
// that issued the ticket.
var (
	extraTagClient = []byte("satquic/resume-client/1\x00")
	extraTagServer = []byte("satquic/resume-server/1\x00")
	extraTagBDP    = []byte("satquic/bdp/1\x00")
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

// withoutTags returns extra without the entries that start with one of
// tags.
func withoutTags(extra [][]byte, tags ...[]byte) [][]byte {
	out := make([][]byte, 0, len(extra)+len(tags))
next:
	for _, e := range extra {
		for _, tag := range tags {
			if bytes.HasPrefix(e, tag) {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

// clientExtra returns a client's ticket entries extra with its own
// replaced: the resumption entry r, and the BDP entry when it holds a
// blob.
func clientExtra(extra [][]byte, r *resumeInfo, blob []byte) [][]byte {
	out := append(withoutTags(extra, extraTagClient, extraTagBDP), appendResumeInfo(extraTagClient, r))
	if len(blob) > 0 {
		out = append(out, append(append([]byte(nil), extraTagBDP...), blob...))
	}
	return out
}

// findBDPBlob returns the blob of the BDP entry among extra, if any.
func findBDPBlob(extra [][]byte) ([]byte, bool) {
	for _, e := range extra {
		if blob, ok := bytes.CutPrefix(e, extraTagBDP); ok && len(blob) > 0 && len(blob) <= wire.MaxBDPBlobLen {
			return blob, true
		}
	}
	return nil, false
}

// storeSession keeps a client's new session ticket s (RFC 8446 section
// 4.6.1) in the TLS ClientSessionCache, with its entries, and remembers
// it, to store it again when a new BDP blob arrives.
func (c *Conn) storeSession(s *tls.SessionState) {
	if s == nil || !c.hasPeer || c.cfg.TLS.ClientSessionCache == nil {
		return
	}
	c.bdp.ticket = s
	c.storeSessionAgain()
}

// storeSessionAgain stores the client's latest ticket again with its
// current entries: the RTT measured by now and the latest BDP blob. A
// ticket that no longer stores closes the connection, as TLS failures do.
func (c *Conn) storeSessionAgain() {
	s := c.bdp.ticket
	if s == nil {
		return
	}
	r := clientResumeInfo(c.version, &c.peerParams, c.sender.RTT())
	if err := c.tls.storeSession(s, clientExtra(s.Extra, &r, c.bdp.saved)); err != nil {
		c.closeLocal(tlsError(err))
	}
}

// onResumeSession takes the BDP blob of the ticket s a client resumes: it
// is returned to the server at once and kept for the next tickets, unless
// a newer one arrives.
func (b *bdpState) onResumeSession(s *tls.SessionState, isClient bool) {
	if s == nil || !isClient || b.cfg == nil {
		return
	}
	blob, ok := findBDPBlob(s.Extra)
	if !ok {
		return
	}
	b.saved = append(b.saved[:0], blob...)
	b.blob = append(b.blob[:0], blob...)
	b.pending, b.fresh = true, true
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
			declineEarlyData(s)
		}
		return 0
	}
	r, ok := findResumeInfo(s.Extra, extraTagClient)
	if !ok || !allow0RTT || r.version != v {
		declineEarlyData(s)
		return r.rtt
	}
	e.params, e.haveParams = r.params, true
	return r.rtt
}

// declineEarlyData turns 0-RTT off for the handshake that resumes s, the
// way crypto/tls asks (QUICResumeSession). At a client, s is the session
// its cache holds, which other connections read at the same time
// (whether to dial early): it is written only when it changes.
func declineEarlyData(s *tls.SessionState) {
	if s.EarlyData {
		s.EarlyData = false
	}
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

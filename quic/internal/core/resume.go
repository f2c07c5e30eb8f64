package core

import (
	"bytes"
	"crypto/tls"
	"time"

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

// onStoreSession completes a client's session ticket with the resumption
// entry and stores it in the TLS ClientSessionCache.
func (c *Conn) onStoreSession(s *tls.SessionState) {
	if s == nil || !c.hasPeer || c.cfg.TLS.ClientSessionCache == nil {
		return
	}
	r := resumeInfo{version: c.version, params: c.peerParams}
	if rtt := c.sender.RTT(); rtt.HasSample() {
		r.rtt = rtt.SmoothedRTT()
	}
	s.Extra = append(withoutTag(s.Extra, extraTagClient), appendResumeInfo(extraTagClient, &r))
	if err := c.tls.StoreSession(s); err != nil {
		c.closeLocal(tlsError(err))
	}
}

// onResumeSession handles the session a client resumes or a server is
// asked to resume. A client takes the remembered parameters for 0-RTT and,
// with Config.ResumeRTT, the remembered RTT as its first estimate (RFC
// 9002 section 6.2.2; nothing was sent yet); it declines 0-RTT unless
// Config.Allow0RTT and the entry allow it. A server declines 0-RTT unless
// Config.Allow0RTT, and unless its ticket still holds (honorsTicket).
func (c *Conn) onResumeSession(s *tls.SessionState) {
	if s == nil {
		return
	}
	if !c.isClient {
		if !c.cfg.Allow0RTT || c.vn.switched || !honorsTicket(s.Extra, c.version, &c.localParams) {
			s.EarlyData = false
		}
		return
	}
	r, ok := findResumeInfo(s.Extra, extraTagClient)
	if ok && c.cfg.ResumeRTT && r.rtt > 0 && c.stats.PacketsSent == 0 {
		if sender, err := newClientSender(&c.cfg, r.rtt); err == nil {
			c.sender = sender
		} // else the configured initial RTT stays
	}
	if !ok || !c.cfg.Allow0RTT || r.version != c.version {
		s.EarlyData = false
		return
	}
	c.early.params, c.early.haveParams = r.params, true
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

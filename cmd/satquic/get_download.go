package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/satquic/satquic/quic"
)

// download connects and fetches every file at once, in the application
// protocol the server chose among tlsConf's NextProtos; early dials with
// DialAddrEarly, so that a resumed session sends its requests in 0-RTT.
// The report is nil when the connection could not be made.
func download(ctx context.Context, server string, files []*getFile, sinks []sink, tlsConf *tls.Config, conf *quic.Config, early bool, stderr io.Writer) (*getReport, error) {
	start := time.Now()
	dial := quic.DialAddr
	if early {
		dial = quic.DialAddrEarly
	}
	stopNote := noteSlowDial(stderr, server, conf.HandshakeTimeout)
	c, err := dial(ctx, server, tlsConf, conf)
	stopNote()
	if err != nil {
		return nil, connectError(server, tlsConf.NextProtos, err)
	}
	proto, err := negotiatedProtocol(ctx, c, tlsConf.NextProtos)
	if err != nil {
		_ = c.CloseWithError(0, "")
		return nil, connectError(server, tlsConf.NextProtos, err)
	}
	fe, err := newFetcher(c, server, proto)
	if err != nil {
		_ = c.CloseWithError(0, "")
		return nil, fmt.Errorf("connecting to %s: %w", server, err)
	}
	p := &getProgress{files: int64(len(files))}
	stopProgress := p.start(stderr)
	var wg sync.WaitGroup
	errs := make([]error, len(files))
	counts := make([]int64, len(files))
	for i, f := range files {
		wg.Go(func() {
			n, err := fe.fetch(ctx, f, sinks[i].w, p)
			f.Bytes, f.Seconds = n, time.Since(start).Seconds()
			if err != nil {
				f.Error = err.Error()
				errs[i] = fmt.Errorf("%s: %w", f.URL, err)
			} else {
				f.done = true
			}
			counts[i] = n
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress()
	if tlsConf.ClientSessionCache != nil {
		if !hasTicket(ctx, c, tlsConf) {
			fmt.Fprintln(stderr, "no session ticket from the server: the next connection cannot resume")
		}
		awaitPathState(ctx, c)
	}
	st := c.Stats()
	cs := c.ConnectionState()
	fe.close()
	rep := &getReport{
		Server:        server,
		Protocol:      proto,
		Files:         files,
		Seconds:       elapsed.Seconds(),
		HandshakeMs:   ms(st.HandshakeDuration),
		SmoothedRTTMs: ms(st.SmoothedRTT),
		MinRTTMs:      ms(st.MinRTT),
		PacketsSent:   st.PacketsSent,
		PacketsRecv:   st.PacketsReceived,
		PacketsLost:   st.PacketsLost,
		Retransmitted: st.PacketsRetransmitted,
		Version:       cs.Version.String(),
		CipherSuite:   tls.CipherSuiteName(cs.TLS.CipherSuite),
		Session:       sessionNew,
		Resumed:       cs.TLS.DidResume,
		Used0RTT:      cs.Used0RTT,

		PathStates:        st.CarefulResume.BDPFramesReceived,
		PathStateReturned: st.CarefulResume.BDPFramesSent > 0,
	}
	if cs.TLS.DidResume {
		rep.Session = sessionResumed
	}
	for _, n := range counts {
		rep.Bytes += n
	}
	if elapsed > 0 {
		rep.GoodputMbps = float64(rep.Bytes) * 8 / elapsed.Seconds() / 1e6
	}
	return rep, errors.Join(errs...)
}

// ticketWait bounds the wait for a session ticket after the downloads: it
// comes with the end of the handshake, long before on any path.
const ticketWait = 2 * time.Second

// hasTicket waits, a little, for the server's session ticket in the
// client's cache.
func hasTicket(ctx context.Context, c *quic.Conn, tlsConf *tls.Config) bool {
	deadline := time.Now().Add(ticketWait)
	for {
		if _, ok := tlsConf.ClientSessionCache.Get(tlsConf.ServerName); ok {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil || c.Context().Err() != nil {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// awaitPathState gives the server's last Careful Resume path state, which
// it sends when its sending stops, a smoothed RTT to arrive after the
// downloads, so that the session ticket keeps the state of the whole
// transfer; it returns at once when one arrives, or when Careful Resume
// is not in use.
func awaitPathState(ctx context.Context, c *quic.Conn) {
	st := c.Stats()
	if !st.CarefulResume.Negotiated {
		return
	}
	deadline := time.Now().Add(min(st.SmoothedRTT, ticketWait))
	for time.Now().Before(deadline) && ctx.Err() == nil && c.Context().Err() == nil {
		if c.Stats().CarefulResume.BDPFramesReceived > st.CarefulResume.BDPFramesReceived {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// earlyDataOffered reports whether the client's cached session for the
// server allows 0-RTT.
func earlyDataOffered(tlsConf *tls.Config) bool {
	cs, ok := tlsConf.ClientSessionCache.Get(tlsConf.ServerName)
	if !ok || cs == nil {
		return false
	}
	_, st, err := cs.ResumptionState()
	return err == nil && st != nil && st.EarlyData
}

// downloadResumed fetches the first file on a first connection and the
// others (or the first again, discarded) on a second one that resumes
// the session, with 0-RTT when the ticket allows it. The second
// connection offers only the protocol the first one spoke: early data
// is accepted only in the protocol of the session (RFC 8446 section
// 4.2.10), and the requests can leave before the server confirms it.
func downloadResumed(ctx context.Context, server string, files []*getFile, sinks []sink, tlsConf *tls.Config, conf *quic.Config, stderr io.Writer) (*getReport, error) {
	rep, err := download(ctx, server, files[:1], sinks[:1], tlsConf, conf, false, stderr)
	if err != nil {
		return rep, err
	}
	rest, restSinks := files[1:], sinks[1:]
	if len(rest) == 0 {
		again := *files[0]
		again.Output = ""
		rest, restSinks = []*getFile{&again}, []sink{{w: io.Discard}}
	}
	offered := earlyDataOffered(tlsConf)
	again := tlsConf.Clone()
	again.NextProtos = []string{rep.Protocol}
	second, err := download(ctx, server, rest, restSinks, again, conf, true, stderr)
	if second != nil {
		switch {
		case !second.Resumed:
			second.Session = sessionNotResumed
		case second.Used0RTT:
			second.Session = session0RTT
		case offered:
			second.Session = session0RTTRefused
		}
		rep.Resumption = second
	}
	return rep, err
}

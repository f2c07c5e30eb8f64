package core

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/wire"
)

// testEpoch is the wall-clock time of virtual time 0 in the tests.
var testEpoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func newValidator(t testing.TB, seed uint64, retryLifetime time.Duration) *AddressValidator {
	t.Helper()
	key := make([]byte, crypto.TokenKeyLen)
	key[0] = byte(seed)
	tp, err := crypto.NewTokenProtector(key, crypto.TokenConfig{RetryLifetime: retryLifetime, NewTokenLifetime: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return &AddressValidator{Tokens: tp, Epoch: testEpoch, Rand: newSeeded(seed + 1000)}
}

// retryListener is a server's listener that validates every client's
// address with Retry and refuses Initials with invalid Retry tokens.
func retryListener(t testing.TB, p *pair, v *AddressValidator) func([]byte) ([]byte, *ServerParams) {
	return func(d []byte) ([]byte, *ServerParams) {
		info, err := PeekInitial(d)
		if err != nil {
			return nil, nil
		}
		params, err := v.Check(info, clientAddr, p.now)
		if err != nil {
			if !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("Check: %v", err)
			}
			out, err := RefuseInitial(nil, info, wire.CodeInvalidToken, "bad token")
			if err != nil {
				t.Fatal(err)
			}
			return out, nil
		}
		if !params.AddressValidated {
			out, err := v.Retry(nil, info, clientAddr, p.now)
			if err != nil {
				t.Fatalf("Retry: %v", err)
			}
			return out, nil
		}
		return nil, &params
	}
}

// retrySCID returns the Source Connection ID of a Retry packet.
func retrySCID(t testing.TB, d []byte) wire.ConnectionID {
	h, _, err := wire.ParseLongHeader(d)
	if err != nil || h.Type != wire.PacketTypeRetry {
		t.Fatalf("not a Retry: %v %v", h.Type, err)
	}
	return h.SrcConnID
}

// TestRetry: a Retry round trip. The client's ClientHello spans two
// datagrams, each answered with a Retry: the client takes the first (RFC
// 9000 section 17.2.5.2) and ignores the second, sends its Initials again
// with the token, and completes two round trips after it started. Both
// ends agree on original_destination_connection_id and
// retry_source_connection_id, and the validated server is not held by the
// amplification limit.
func TestRetry(t *testing.T) {
	ccfg, scfg := testConfigs(t, 90)
	const delay = 20 * time.Millisecond
	p := newPair(t, ccfg, scfg, delay)
	v := newValidator(t, 90, 10*time.Second)
	p.listen = retryListener(t, p, v)
	var retries [][]byte
	listen := p.listen
	p.listen = func(d []byte) ([]byte, *ServerParams) {
		reply, params := listen(d)
		if reply != nil {
			retries = append(retries, reply)
		}
		return reply, params
	}
	var completedAt time.Duration
	p.clientApp = func(now time.Duration, c *Conn) {
		if c.HandshakeComplete() && completedAt == 0 {
			completedAt = p.now
		}
	}
	p.mustRun(p.confirmed, 5*time.Second)
	if len(retries) != 2 {
		t.Fatalf("%d Retry packets sent, want one per datagram of the ClientHello", len(retries))
	}
	first := retrySCID(t, retries[0])
	if !p.client.retry.done || p.client.retry.scid != first || retrySCID(t, retries[1]) == first {
		t.Fatalf("client took Retry %v, want the first (%v)", p.client.retry.scid, first)
	}
	if completedAt != 4*delay {
		t.Errorf("client completed at %v, want %v", completedAt, 4*delay)
	}
	pp, _ := p.client.PeerParams()
	if pp.RetrySourceConnectionID == nil || *pp.RetrySourceConnectionID != first || *pp.OriginalDestinationConnectionID != p.client.origDCID {
		t.Errorf("server's parameters: retry_source %v original_destination %v", pp.RetrySourceConnectionID, pp.OriginalDestinationConnectionID)
	}
	if p.server.OriginalDestConnID() != p.client.origDCID || p.server.InitialDestConnID() != first {
		t.Errorf("server's original %v initial %v", p.server.OriginalDestConnID(), p.server.InitialDestConnID())
	}
	if cs := p.client.Stats(); cs.PacketsDropped != 1 || cs.Recovery.PTOs != 0 {
		t.Errorf("client dropped %d packets (the second Retry), %d PTOs", cs.PacketsDropped, cs.Recovery.PTOs)
	}
}

// TestRetryTamperedTag: a Retry whose integrity tag does not verify is
// ignored (RFC 9001 section 5.8); the valid one that follows is taken.
func TestRetryTamperedTag(t *testing.T) {
	ccfg, scfg := testConfigs(t, 91)
	const delay = 20 * time.Millisecond
	p := newPair(t, ccfg, scfg, delay)
	v := newValidator(t, 91, 10*time.Second)
	listen := retryListener(t, p, v)
	n := 0
	var good wire.ConnectionID
	p.listen = func(d []byte) ([]byte, *ServerParams) {
		reply, params := listen(d)
		if reply != nil {
			if n++; n == 1 {
				reply[len(reply)-1] ^= 1
			} else if good.Len() == 0 {
				good = retrySCID(t, reply)
			}
		}
		return reply, params
	}
	p.mustRun(p.confirmed, 5*time.Second)
	if p.client.retry.scid != good {
		t.Errorf("client took Retry %v, want the untampered %v", p.client.retry.scid, good)
	}
	if cs := p.client.Stats(); cs.PacketsDropped != 1 {
		t.Errorf("client dropped %d packets, want the tampered Retry", cs.PacketsDropped)
	}
}

// TestRetryWrongTransportParameters: a server connection that does not
// know about the Retry omits retry_source_connection_id; the client closes
// with TRANSPORT_PARAMETER_ERROR (RFC 9000 section 7.3).
func TestRetryWrongTransportParameters(t *testing.T) {
	ccfg, scfg := testConfigs(t, 92)
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	v := newValidator(t, 92, 10*time.Second)
	listen := retryListener(t, p, v)
	p.listen = func(d []byte) ([]byte, *ServerParams) {
		reply, params := listen(d)
		if params != nil {
			// Keys right, parameters forgetting the Retry.
			params.OriginalDestConnID, params.RetrySourceConnID = params.RetrySourceConnID, wire.ConnectionID{}
		}
		return reply, params
	}
	p.mustRun(func() bool { return p.client.Err() != nil }, 5*time.Second)
	var ce *ConnError
	if !errors.As(p.client.Err(), &ce) || ce.Remote || ce.Code != wire.CodeTransportParameterError {
		t.Fatalf("client error %v, want TRANSPORT_PARAMETER_ERROR", p.client.Err())
	}
}

// TestRetryInvalidToken: a Retry token that expired on the way (a
// lifetime shorter than the round trip) is refused with INVALID_TOKEN
// (RFC 9000 section 8.1.2), which the client sees two round trips after
// it started.
func TestRetryInvalidToken(t *testing.T) {
	ccfg, scfg := testConfigs(t, 93)
	const delay = 20 * time.Millisecond
	p := newPair(t, ccfg, scfg, delay)
	v := newValidator(t, 93, 10*time.Millisecond)
	p.listen = retryListener(t, p, v)
	p.mustRun(func() bool { return p.client.Err() != nil }, 5*time.Second)
	var ce *ConnError
	if !errors.As(p.client.Err(), &ce) || !ce.Remote || ce.Code != wire.CodeInvalidToken {
		t.Fatalf("client error %v, want INVALID_TOKEN from the server", p.client.Err())
	}
	if p.now != 4*delay || p.server != nil {
		t.Errorf("refused at %v (server %v), want %v without a connection", p.now, p.server != nil, 4*delay)
	}
}

// TestAddressValidatorCheck covers the token cases of Check.
func TestAddressValidatorCheck(t *testing.T) {
	v := newValidator(t, 94, 10*time.Second)
	other := newValidator(t, 95, 10*time.Second)
	odcid := mustCID(t, 1, 2, 3, 4, 5, 6, 7, 8)
	rscid := mustCID(t, 9, 9, 9, 9, 9, 9, 9, 9)
	info := InitialInfo{Version: wire.Version1, DstConnID: odcid, SrcConnID: rscid}
	retry, err := v.Retry(nil, info, clientAddr, 0)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := wire.ParseLongHeader(retry)
	if err != nil {
		t.Fatal(err)
	}
	if err := crypto.VerifyRetry(retry, odcid.Bytes(), crypto.Version1); err != nil {
		t.Fatalf("Retry tag: %v", err)
	}
	retryTok := h.Token
	newTok, err := v.NewToken(clientAddr, wire.Version1, 0)
	if err != nil {
		t.Fatal(err)
	}
	otherTok, _ := other.NewToken(clientAddr, wire.Version1, 0)
	// The same IP address with a new port: fine for NEW_TOKEN only.
	moved := netip.AddrPortFrom(clientAddr.Addr(), 5555)
	for _, tc := range []struct {
		name      string
		token     []byte
		from      netip.AddrPort
		at        time.Duration
		validated bool
		invalid   bool
	}{
		{"none", nil, clientAddr, 0, false, false},
		{"retry", retryTok, clientAddr, time.Second, true, false},
		{"retry expired", retryTok, clientAddr, 11 * time.Second, false, true},
		{"retry other port", retryTok, moved, 0, false, true},
		{"new token", newTok, clientAddr, time.Hour, true, false},
		{"new token other port", newTok, moved, 0, true, false},
		{"new token expired", newTok, clientAddr, 25 * time.Hour, false, false},
		{"new token other key", otherTok, clientAddr, 0, false, false},
		{"new token as retry", append([]byte{tokenPrefixRetry}, newTok[1:]...), clientAddr, 0, false, true},
		{"garbage", []byte("garbage token"), clientAddr, 0, false, false},
	} {
		in := info
		in.DstConnID = rscid
		in.Token = tc.token
		p, err := v.Check(in, tc.from, tc.at)
		if tc.invalid != errors.Is(err, ErrInvalidToken) || (!tc.invalid && err != nil) || p.AddressValidated != tc.validated {
			t.Errorf("%s: validated %v, err %v", tc.name, p.AddressValidated, err)
			continue
		}
		if tc.name == "retry" && (p.OriginalDestConnID != odcid || p.RetrySourceConnID != rscid) {
			t.Errorf("retry: original %v retry source %v", p.OriginalDestConnID, p.RetrySourceConnID)
		}
	}
}

// TestRefuseInitial: the stateless CONNECTION_CLOSE opens with the
// client's Initial keys and carries the code.
func TestRefuseInitial(t *testing.T) {
	ccfg, _ := testConfigs(t, 96)
	c, d := firstClientDatagram(t, ccfg)
	info, err := PeekInitial(d)
	if err != nil {
		t.Fatal(err)
	}
	out, err := RefuseInitial(nil, info, wire.CodeConnectionRefused, "busy")
	if err != nil {
		t.Fatal(err)
	}
	if len(out) >= len(d) {
		t.Errorf("refusal of %d bytes for a %d-byte Initial", len(out), len(d))
	}
	c.HandleDatagram(time.Millisecond, Datagram{Addr: serverAddr, Data: out})
	var ce *ConnError
	if !errors.As(c.Err(), &ce) || !ce.Remote || ce.Code != wire.CodeConnectionRefused || ce.Reason != "busy" {
		t.Fatalf("client error %v", c.Err())
	}
}

func mustCID(t testing.TB, b ...byte) wire.ConnectionID {
	t.Helper()
	id, err := wire.NewConnectionID(b)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestRetryIgnored: a Retry that keeps the client's Destination Connection
// ID, names another connection ID, or comes after a packet from the server
// is dropped (RFC 9000 section 17.2.5.2).
func TestRetryIgnored(t *testing.T) {
	ccfg, _ := testConfigs(t, 97)
	c, d := firstClientDatagram(t, ccfg)
	info, err := PeekInitial(d)
	if err != nil {
		t.Fatal(err)
	}
	build := func(dst, src wire.ConnectionID) []byte {
		h := wire.LongHeader{Type: wire.PacketTypeRetry, Version: wire.Version1, DstConnID: dst, SrcConnID: src, Token: []byte("tok")}
		pkt, err := wire.AppendLongHeader(nil, &h)
		if err != nil {
			t.Fatal(err)
		}
		pkt, err = crypto.AppendRetryTag(pkt, info.DstConnID.Bytes(), crypto.Version1)
		if err != nil {
			t.Fatal(err)
		}
		return pkt
	}
	fresh := mustCID(t, 7, 7, 7, 7, 7, 7, 7, 7)
	for _, pkt := range [][]byte{build(info.SrcConnID, info.DstConnID), build(fresh, fresh)} {
		c.HandleDatagram(time.Millisecond, Datagram{Addr: serverAddr, Data: pkt})
		if c.retry.done {
			t.Fatal("took an invalid Retry")
		}
	}
	c.HandleDatagram(time.Millisecond, Datagram{Addr: serverAddr, Data: build(info.SrcConnID, fresh)})
	if !c.retry.done || string(c.retry.token) != "tok" || c.cids.dcid() != fresh {
		t.Fatal("did not take a valid Retry")
	}
	// Its Initials now carry the token and the new connection ID.
	d2, ok := c.NextDatagram(2*time.Millisecond, nil)
	if !ok {
		t.Fatal("no Initial after the Retry")
	}
	info2, err := PeekInitial(d2.Data)
	if err != nil || string(info2.Token) != "tok" || info2.DstConnID != fresh {
		t.Fatalf("Initial after Retry: %+v %v", info2, err)
	}
}

// TestRestartedRecoveryProbesPMTU: a client whose loss recovery starts
// again, after a Retry or from the RTT of a resumed session, still learns
// the fate of its path MTU probes: one acknowledged probe raises its
// datagram size, as on a connection that kept its first loss recovery.
func TestRestartedRecoveryProbesPMTU(t *testing.T) {
	const delay = 10 * time.Millisecond
	cases := []struct {
		name      string
		pair      func(t *testing.T) *pair
		restarted func(c *Conn) bool
	}{
		{"Retry", func(t *testing.T) *pair {
			ccfg, scfg := testConfigs(t, 94)
			p := newPair(t, ccfg, scfg, delay)
			p.listen = retryListener(t, p, newValidator(t, 94, 10*time.Second))
			return p
		}, func(c *Conn) bool { return c.retry.done }},
		{"ResumeRTT", func(t *testing.T) *pair {
			ccfg, scfg := resumeConfigs(t, 95)
			ccfg.ResumeRTT = true
			primeSession(t, ccfg, scfg, delay)
			return newPair(t, ccfg, scfg, delay)
		}, func(c *Conn) bool { return c.Stats().SmoothedRTT != c.cfg.Recovery.InitialRTT }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.pair(t)
			p.mustRun(p.confirmed, 5*time.Second)
			if !tc.restarted(p.client) {
				t.Fatal("the client's loss recovery did not start again")
			}
			err := p.run(p.pmtuSettled, p.now+5*time.Second)
			st := p.client.Stats().PathMTU
			if err != nil || st.MaxDatagramSize != DefaultMaxProbeDatagramSize || st.ProbesSent != 1 || st.ProbesLost != 0 {
				t.Errorf("client's path MTU %+v (%v), want %d after one probe", st, err, DefaultMaxProbeDatagramSize)
			}
		})
	}
}

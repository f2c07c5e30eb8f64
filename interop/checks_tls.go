//go:build linux

package interop

import (
	"crypto/tls"
	"fmt"
	"slices"

	"github.com/satquic/satquic/interop/capture"
)

// The checks of what the TLS handshake and the keys did: the ClientHello,
// the server's transport parameters, resumption, 0-RTT and key updates.

// checkLongRTT: with 750 ms each way, the client's first probe timeout
// comes before the server's answer, so it sent its ClientHello twice.
func checkLongRTT(o *outcome) []string {
	out := checkTransfer(o)
	hellos := 0
	for _, p := range o.packets(true, capture.TypeInitial) {
		if p.CryptoAtZero {
			hellos++
		}
	}
	if hellos < 2 {
		out = append(out, fmt.Sprintf("%d ClientHellos, want 2 or more", hellos))
	}
	return out
}

func checkChaCha20(o *outcome) []string {
	out := checkTransfer(o)
	for _, c := range o.a.Conns {
		switch {
		case c.ClientHello == nil:
			out = append(out, "no ClientHello could be read")
		case !slices.Equal(c.ClientHello.CipherSuites, []uint16{tls.TLS_CHACHA20_POLY1305_SHA256}):
			out = append(out, fmt.Sprintf("the client offered cipher suites %s, want ChaCha20 alone", suiteList(c.ClientHello.CipherSuites)))
		}
	}
	return out
}

func suiteList(ids []uint16) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += tls.CipherSuiteName(id)
	}
	return "[" + s + "]"
}

// maxStreamsBidi is the transport parameter initial_max_streams_bidi.
const maxStreamsBidi = 0x08

// checkMultiplexing: the server's stream limit is at most 1000, so the
// 1999 requests need it to raise the limit as they complete.
func checkMultiplexing(o *outcome) []string {
	out := checkTransfer(o)
	for _, c := range o.a.Conns {
		if c.ServerHello == nil {
			continue
		}
		v, ok := c.ServerParams[maxStreamsBidi]
		if !ok {
			out = append(out, noSecrets(c, "the server's stream limit"))
			continue
		}
		if n, _, ok := readVarint(v); !ok || n > 1000 {
			out = append(out, fmt.Sprintf("the server allowed %d bidirectional streams, more than 1000", n))
		}
	}
	return out
}

// checkResumption: the second connection resumed the first one's session:
// its ServerHello accepted a pre-shared key, and no certificate came.
func checkResumption(o *outcome) []string {
	out := append(o.wantHandshakes(2), o.wantVersion1()...)
	conns := o.answered()
	if len(conns) != 2 {
		return append(out, fmt.Sprintf("%d connections with a ServerHello in the capture, want 2", len(conns)))
	}
	first, second := conns[0], conns[1]
	if first.ServerHello.PreSharedKey {
		out = append(out, "the first connection resumed a session")
	}
	if !second.ServerHello.PreSharedKey {
		out = append(out, "the second connection did not resume the session (no pre_shared_key in its ServerHello)")
	}
	if first.Secrets && !first.ServerCertificate {
		out = append(out, "no Certificate in the first handshake")
	}
	if second.Secrets && second.ServerCertificate {
		out = append(out, "the server sent a Certificate in the second handshake")
	}
	return out
}

// checkZeroRTT: the requests of the second connection went in 0-RTT
// packets, and little went in 1-RTT (at most half the request lines).
func checkZeroRTT(o *outcome) []string {
	out := append(o.wantHandshakes(2), o.wantVersion1()...)
	early, late, padding, probes, probeBytes := 0, 0, 0, 0, 0
	for _, p := range o.packets(true, capture.Type0RTT) {
		early += p.PayloadLen
	}
	for _, p := range o.packets(true, capture.Type1RTT) {
		late += p.PayloadLen
		padding += p.Padding
		if p.MTUProbe {
			probes++
			probeBytes += p.PayloadLen
		}
	}
	if early == 0 {
		out = append(out, "the client sent no 0-RTT data")
	}
	if limit := zeroRTTNameLen * zeroRTTFiles / 2; late > limit {
		// The runner counts PADDING too; saying how much of it there
		// was, and how much went in path MTU probes, tells requests
		// sent late from padded datagrams and probes.
		msg := fmt.Sprintf("the client sent %d bytes in 1-RTT packets, more than %d, %d of them PADDING", late, limit, padding)
		if probes > 0 {
			msg += fmt.Sprintf(", %d in %d path MTU probes", probeBytes, probes)
			if late-probeBytes <= limit {
				msg += ", without which the limit holds"
			}
		}
		if conns := o.answered(); len(conns) == 2 && conns[1].Secrets {
			if conns[1].ServerEarlyData {
				msg += " (the server accepted 0-RTT)"
			} else {
				msg += " (the server rejected 0-RTT)"
			}
		}
		out = append(out, msg)
	}
	return out
}

// checkKeyUpdate: both ends sent 1-RTT packets with the key phase bit
// set, so the client updated its keys and the server followed.
func checkKeyUpdate(o *outcome) []string {
	out := checkTransfer(o)
	var phase1 [2]int
	opened := 0
	for _, fromClient := range []bool{true, false} {
		for _, p := range o.packets(fromClient, capture.Type1RTT) {
			if !p.HeaderOpened {
				continue
			}
			opened++
			if p.KeyPhase == 1 {
				phase1[dirIndex(fromClient)]++
			}
		}
	}
	if opened == 0 && len(o.a.Conns) > 0 {
		return append(out, noSecrets(o.a.Conns[0], "the key phase bits"))
	}
	if phase1[0] == 0 || phase1[1] == 0 {
		out = append(out, fmt.Sprintf("packets with key phase 1: %d from the client, %d from the server; want some both ways", phase1[0], phase1[1]))
	}
	return out
}

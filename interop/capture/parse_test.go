package capture

import (
	"context"
	"crypto/tls"
	"slices"
	"testing"
)

// TestWalkFrames reads a payload of the frames the analysis looks for
// among others it walks over.
func TestWalkFrames(t *testing.T) {
	payload := []byte{
		frameAckECN, 0x05, 0x00, 0x01, 0x00, 0x02, 0x01, 0x03, 0x04, 0x00, // ACK_ECN: two ranges, ECN counts
		frameMaxData, 0x44, 0x00, // MAX_DATA
		frameCrypto, 0x40, 0x10, 0x03, 'a', 'b', 'c', // CRYPTO at offset 16
		0x7f, 0xe0, 0x05, // FEC_SOURCE_ID 5
		0x0a, 0x04, 0x02, 'h', 'i', // STREAM with a length
		framePadding, framePadding,
	}
	s := walkFrames(payload)
	if !s.complete || !s.ackECN || len(s.crypto) != 1 || s.crypto[0].offset != 16 || string(s.crypto[0].data) != "abc" || s.padding != 2 {
		t.Fatalf("walked %+v", s)
	}
	if s := walkFrames([]byte{framePing, 0x40, 0x21, 0x00}); s.complete {
		t.Fatalf("an unknown frame type did not end the walk: %+v", s)
	}
}

// TestMTUProbe tells a path MTU probe from the other packets of PING and
// PADDING frames: a small keep-alive, a packet with more than those
// frames, a probe's size in a long header.
func TestMTUProbe(t *testing.T) {
	pingPadding := func(n int) []byte { return append([]byte{framePing}, make([]byte, n-1)...) }
	for _, c := range []struct {
		name    string
		typ     PacketType
		size    int
		payload []byte
		want    bool
	}{
		{"probe", Type1RTT, 1406, pingPadding(1380), true},
		{"PADDING before the PING", Type1RTT, 1444, append(make([]byte, 1417), framePing), true},
		{"1200 bytes", Type1RTT, 1200, pingPadding(1174), false},
		{"keep-alive", Type1RTT, 31, pingPadding(5), false},
		{"ACK too", Type1RTT, 1406, append([]byte{frameAck, 0x01, 0x00, 0x00, 0x01}, pingPadding(1375)...), false},
		{"PADDING alone", Type1RTT, 1406, make([]byte, 1380), false},
		{"Handshake packet", TypeHandshake, 1406, pingPadding(1380), false},
	} {
		p := &Packet{Type: c.typ, Size: c.size}
		(&Conn{}).took(p, opened{payload: c.payload}, 0, spaceApp)
		if p.MTUProbe != c.want {
			t.Errorf("%s: MTUProbe %v, want %v", c.name, p.MTUProbe, c.want)
		}
	}
}

// TestParseHellos reads a ClientHello made by crypto/tls for QUIC.
func TestParseHellos(t *testing.T) {
	conf := &tls.Config{ServerName: "example.test", NextProtos: []string{"hq-interop"}, MinVersion: tls.VersionTLS13}
	q := tls.QUICClient(&tls.QUICConfig{TLSConfig: conf})
	q.SetTransportParameters([]byte{0x08, 0x01, 0x05})
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var hello []byte
	for {
		e := q.NextEvent()
		if e.Kind == tls.QUICNoEvent {
			break
		}
		if e.Kind == tls.QUICWriteData && e.Level == tls.QUICEncryptionLevelInitial {
			hello = append(hello, e.Data...)
		}
	}
	// Split in two CRYPTO frames, the second first, as a packet loss
	// would have them arrive.
	var st cryptoStream
	st.add(cryptoFrame{100, hello[100:]})
	if len(splitHandshake(st.contiguous())) != 0 {
		t.Fatal("a message read from the middle of the stream")
	}
	st.add(cryptoFrame{0, hello[:100]})
	msgs := splitHandshake(st.contiguous())
	if len(msgs) != 1 || msgs[0].typ != msgClientHello {
		t.Fatalf("messages %+v", msgs)
	}
	ch, ok := parseClientHello(msgs[0].body)
	if !ok || len(ch.Random) != 32 {
		t.Fatalf("ClientHello %+v, %v", ch, ok)
	}
	for _, id := range []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_CHACHA20_POLY1305_SHA256} {
		if !slices.Contains(ch.CipherSuites, id) {
			t.Errorf("cipher suites %x lack %x", ch.CipherSuites, id)
		}
	}
}

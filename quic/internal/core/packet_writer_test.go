package core

import (
	"bytes"
	"testing"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// writerTestKeys returns one Initial key set of a test connection ID, for
// both spaces of the writer tests (the writer does not care which keys).
func writerTestKeys(t *testing.T) (*crypto.Keys, wire.ConnectionID) {
	t.Helper()
	id := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	keys, _, err := crypto.NewInitial(id, crypto.Version1)
	if err != nil {
		t.Fatal(err)
	}
	dcid, err := wire.NewConnectionID(id)
	if err != nil {
		t.Fatal(err)
	}
	return keys, dcid
}

// startTestPacket starts a long-header packet of space s, numbered pn,
// sealed with keys.
func startTestPacket(t *testing.T, w *packetWriter, s recovery.Space, pn uint64, dcid wire.ConnectionID, keys *crypto.Keys) {
	t.Helper()
	p := plannedPacket{space: s, pn: pn, pnLen: 1}
	h := wire.LongHeader{Type: packetTypeOfSpace(p.space), Version: wire.Version1, DstConnID: dcid}
	if !w.startLongPacket(p, keys, &h) {
		t.Fatalf("starting a %v packet: %v", p.space, w.err)
	}
}

// openTestPacket removes the protection of the long-header packet at the
// start of d and returns its payload and the rest of the datagram.
func openTestPacket(t *testing.T, keys *crypto.Keys, d []byte) (payload, rest []byte) {
	t.Helper()
	h, pnOffset, err := wire.ParseLongHeader(d)
	if err != nil {
		t.Fatal(err)
	}
	end := pnOffset + int(h.Length)
	if end > len(d) {
		t.Fatalf("Length %d runs past the datagram", h.Length)
	}
	pkt := d[:end]
	pnLen, pn, err := keys.Header().Remove(pkt, pnOffset)
	if err != nil {
		t.Fatal(err)
	}
	payload, err = keys.Packet().Open(pkt, pnOffset+pnLen, pn)
	if err != nil {
		t.Fatalf("%v packet: %v", h.Type, err)
	}
	return payload, d[end:]
}

// TestPacketWriterCoalesces writes an Initial packet, a packet it drops
// for having no frame, and a Handshake packet, and pads the datagram as a
// client's: each Length field spans its packet, the padding goes in the
// Initial packet, and both packets open with the right payload.
func TestPacketWriterCoalesces(t *testing.T) {
	keys, dcid := writerTestKeys(t)
	var w packetWriter
	w.reset(nil, 1400)
	startTestPacket(t, &w, spaceInitial, 0, dcid, keys)
	w.appendPing(fkPing)
	// A one-byte PING is too short for the header protection sample.
	if p := w.finishPacket(); p == nil || !p.ackEliciting || !p.padded || p.end-p.payload != 3 {
		t.Fatalf("finished Initial packet %+v", p)
	}
	startTestPacket(t, &w, spaceHandshake, 7, dcid, keys)
	if p := w.finishPacket(); p != nil {
		t.Fatalf("a packet without frames was kept: %+v", p)
	}
	startTestPacket(t, &w, spaceHandshake, 7, dcid, keys)
	f := wire.MaxDataFrame{Maximum: 1 << 20}
	if !w.appendFrame(f.Len(), f.Append) {
		t.Fatal("MAX_DATA does not fit")
	}
	w.record(sentFrame{kind: fkMaxData})
	w.finishPacket()
	w.padDatagram(true)
	if pkts := w.packets(); len(pkts) != 2 || !pkts[0].padded || pkts[1].padded {
		t.Fatalf("packets %+v: want two, the Initial padded", pkts)
	}
	d, err := w.seal()
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != minInitialDatagram {
		t.Fatalf("datagram of %d bytes, want %d", len(d), minInitialDatagram)
	}
	initial, rest := openTestPacket(t, keys, d)
	if initial[0] != byte(wire.FrameTypePing) || len(bytes.Trim(initial[1:], "\x00")) != 0 || len(initial) < 1000 {
		t.Errorf("Initial payload of %d bytes %x, want PING then PADDING", len(initial), initial)
	}
	handshake, rest := openTestPacket(t, keys, rest)
	if want, _ := f.Append(nil); !bytes.Equal(handshake, want) {
		t.Errorf("Handshake payload %x, want MAX_DATA alone", handshake)
	}
	if len(rest) != 0 {
		t.Errorf("%d bytes after the last packet", len(rest))
	}
}

// TestPacketWriterBudget checks that frames stop at the room the budget
// leaves, and that a FEC source packet moves its frames behind
// FEC_SOURCE_ID and keeps its plaintext when sealed.
func TestPacketWriterBudget(t *testing.T) {
	keys, dcid := writerTestKeys(t)
	var w packetWriter
	const size = 1200
	w.reset(make([]byte, 0, 64), size)
	startTestPacket(t, &w, spaceInitial, 3, dcid, keys)
	p := w.current()
	if got, want := w.room(), size-p.hdrLen-crypto.TagLen; got != want {
		t.Fatalf("room %d, want %d", got, want)
	}
	w.reserve(fecReserve)
	data := bytes.Repeat([]byte{0xab}, w.room()-4)
	f := wire.CryptoFrame{Data: data}
	if w.appendFrame(f.Len()+w.room(), f.Append) {
		t.Fatal("a frame longer than the room was appended")
	}
	if !w.appendFrame(f.Len(), f.Append) {
		t.Fatalf("CRYPTO frame of %d bytes does not fit %d", f.Len(), w.room())
	}
	w.record(sentFrame{kind: fkStream})
	w.markSource(5, 0)
	if p = w.finishPacket(); !p.fecSource {
		t.Fatal("FEC_SOURCE_ID not recorded")
	}
	d, err := w.seal()
	if err != nil {
		t.Fatal(err)
	}
	if len(d) > size {
		t.Fatalf("datagram of %d bytes exceeds the budget of %d", len(d), size)
	}
	payload, _ := openTestPacket(t, keys, d)
	if !bytes.Equal(payload, w.symbol) {
		t.Fatal("the kept symbol differs from the sealed payload")
	}
	seq, n, ok := sourceID(payload)
	if !ok || seq != 5 {
		t.Fatalf("FEC_SOURCE_ID %d, %v", seq, ok)
	}
	want, _ := f.Append(nil)
	if !bytes.Equal(payload[n:], want) {
		t.Error("the frames did not move behind FEC_SOURCE_ID intact")
	}
}

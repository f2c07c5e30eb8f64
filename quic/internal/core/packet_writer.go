package core

import (
	"fmt"
	"slices"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// lengthFieldLen is the size of the Length field of the long headers this
// endpoint sends: two bytes hold any packet up to 16383 bytes.
const lengthFieldLen = 2

// minFrameRoom is the least room for frames worth starting a packet for.
const minFrameRoom = 8

// datagramSlack is what a datagram buffer the writer allocates holds
// beyond the budget: the padding of packets too short for header
// protection, which the budget leaves out.
const datagramSlack = 64

// zeros supplies PADDING frames.
var zeros [minInitialDatagram]byte

// packetProtector seals a packet in place (crypto.Keys, crypto.AppKeys).
type packetProtector interface {
	Protect(packet []byte, pnOffset int, pn uint64) ([]byte, error)
}

// plannedPacket is a packet of the datagram being written: its header
// fields, where it lies in the datagram, and what its frames make of it.
type plannedPacket struct {
	space        recovery.Space
	pn           uint64
	pnLen        int
	hdrLen       int // header length, packet number included
	ackEliciting bool
	hasAck       bool
	padded       bool
	early        bool // a 0-RTT packet
	fecSource    bool // a FEC source symbol (fec_send.go)
	// start, payload and end are offsets in the datagram: the header,
	// the first frame, and the end of the frames.
	start, payload, end int
}

// size is the packet's size once sealed.
func (p *plannedPacket) size() int { return p.hdrLen + p.end - p.payload + crypto.TagLen }

// long reports whether the packet has a long header (RFC 9000 section 17.2).
func (p *plannedPacket) long() bool { return p.space != spaceApp || p.early }

// packetWriter writes one datagram. A packet is written straight into the
// datagram: its header when it starts, then the frames the connection
// appends, within the room the datagram's budget leaves. The packets stay
// in plaintext, each followed by room for its AEAD tag, until the datagram
// is complete, because the padding an Initial packet needs (RFC 9000
// section 14.1) goes into the last packet, known only then; seal then
// protects each in place (RFC 9001 section 5). For loss recovery the
// writer keeps the list of each packet's frames (sentlog.go).
type packetWriter struct {
	b    []byte // the datagram
	size int    // its budget
	// used is what the finished packets took of the budget. It leaves
	// out the padding of packets too short for header protection: with
	// it, a datagram may exceed the budget by a few bytes.
	used int
	// pkts holds the n finished packets, then the one being written,
	// whose frames may reach end, an offset in b.
	pkts [numSpaces]plannedPacket
	n    int
	end  int
	// keys seal each packet of pkts (RFC 9001 section 5). They are kept
	// apart so that a plannedPacket, copied for every packet, holds no
	// pointer.
	keys [numSpaces]packetProtector
	// frames lists the frames of each space's packet.
	frames [numSpaces][]sentFrame
	ack    wire.AckFrame // the ACK frame being appended
	// data holds stream bytes that straddle send buffer blocks; symbol
	// the plaintext payload of a FEC source packet once it is sealed.
	data, symbol []byte
	// err is the first header or frame that could not be encoded: the
	// datagram is not sent (sealDatagram).
	err error
	// spare holds the datagram when the caller's buffer is too small,
	// and goes to the caller with it (inSpare): a call that sends nothing
	// allocates nothing.
	spare   []byte
	inSpare bool
}

// reset starts a datagram of at most size bytes in buf's memory (buf may be
// nil).
func (w *packetWriter) reset(buf []byte, size int) {
	w.b, w.size, w.used, w.n, w.err, w.inSpare = buf[:0], size, 0, 0, nil, false
}

// empty reports whether the datagram has no packet.
func (w *packetWriter) empty() bool { return w.n == 0 }

// packets returns the finished packets.
func (w *packetWriter) packets() []plannedPacket { return w.pkts[:w.n] }

// framesOf returns the frames of the packet of space s.
func (w *packetWriter) framesOf(s recovery.Space) []sentFrame { return w.frames[s] }

// current is the packet being written.
func (w *packetWriter) current() *plannedPacket { return &w.pkts[w.n] }

// currentFrames lists the frames of the packet being written.
func (w *packetWriter) currentFrames() []sentFrame { return w.frames[w.pkts[w.n].space] }

// room is how many more bytes of frames the current packet takes.
func (w *packetWriter) room() int { return w.end - len(w.b) }

// reserve keeps n bytes of the current packet's room back (a negative n
// gives them back).
func (w *packetWriter) reserve(n int) { w.end -= n }

// startShortPacket starts the 1-RTT packet p to dcid, to be sealed with
// keys.
func (w *packetWriter) startShortPacket(p plannedPacket, keys packetProtector, dcid wire.ConnectionID) bool {
	w.beginPacket(&p)
	w.keys[w.n] = keys
	h := wire.ShortHeader{DstConnID: dcid, PacketNumber: p.pn, PacketNumberLen: p.pnLen}
	b, err := wire.AppendShortHeader(w.b, &h)
	return w.afterHeader(p, b, err)
}

// startLongPacket starts packet p, to be sealed with keys, with the long
// header h, whose packet number it sets and whose Length field seal fills
// in.
func (w *packetWriter) startLongPacket(p plannedPacket, keys packetProtector, h *wire.LongHeader) bool {
	w.beginPacket(&p)
	w.keys[w.n] = keys
	h.PacketNumber, h.PacketNumberLen = p.pn, p.pnLen
	h.Length, h.LengthLen = uint64(p.pnLen), lengthFieldLen
	b, err := wire.AppendLongHeader(w.b, h)
	return w.afterHeader(p, b, err)
}

// beginPacket makes room for the AEAD tag of the packet before p and
// places p after it.
func (w *packetWriter) beginPacket(p *plannedPacket) {
	if w.n == 0 && cap(w.b) < w.size+datagramSlack {
		if cap(w.spare) < w.size+datagramSlack {
			w.spare = make([]byte, 0, w.size+datagramSlack)
		}
		w.b, w.inSpare = w.spare[:0], true
	}
	if w.n > 0 {
		w.b = append(w.b, zeros[:crypto.TagLen]...)
	}
	p.start = len(w.b)
	w.frames[p.space] = w.frames[p.space][:0]
}

// afterHeader opens packet p once its header is written into b.
func (w *packetWriter) afterHeader(p plannedPacket, b []byte, err error) bool {
	if err != nil {
		w.fail(err)
		w.b = w.b[:w.tail()]
		return false
	}
	w.b = b
	p.hdrLen = len(b) - p.start
	p.payload = len(b)
	w.pkts[w.n] = p
	w.end = p.payload + w.size - w.used - p.hdrLen - crypto.TagLen
	return true
}

// tail is the end of the last finished packet's frames.
func (w *packetWriter) tail() int {
	if w.n == 0 {
		return 0
	}
	return w.pkts[w.n-1].end
}

// fail records the first encoding failure of the datagram.
func (w *packetWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// appendFrame appends a frame of n bytes encoded by enc (a wire frame's
// Append) if it fits. A frame that cannot be encoded fails the datagram.
// Taking the method rather than a wire.Frame keeps the frame off the heap.
func (w *packetWriter) appendFrame(n int, enc func([]byte) ([]byte, error)) bool {
	if n > w.room() {
		return false
	}
	b, err := enc(w.b)
	if err != nil {
		w.fail(err)
		return false
	}
	w.b = b
	return true
}

// appendPing appends a PING frame, recorded as kind: an ordinary one, or
// a path MTU probe's (pmtud.go).
func (w *packetWriter) appendPing(kind frameKind) {
	w.b = append(w.b, byte(wire.FrameTypePing))
	w.record(sentFrame{kind: kind})
}

// record adds f to the current packet's frames and notes what it makes of
// the packet.
func (w *packetWriter) record(f sentFrame) {
	p := &w.pkts[w.n]
	w.frames[p.space] = append(w.frames[p.space], f)
	switch f.kind {
	case fkAck:
		p.hasAck = true
	case fkFECRecovered:
	case fkFECSourceID:
		p.fecSource, p.ackEliciting = true, true
	default:
		p.ackEliciting = true
	}
}

// finishPacket closes the current packet and returns it, or drops it and
// returns nil when it has no frame. A packet too short for the header
// protection sample gets PADDING (RFC 9001 section 5.4.2).
func (w *packetWriter) finishPacket() *plannedPacket {
	p := &w.pkts[w.n]
	if len(w.b) == p.payload {
		w.abandonPacket()
		return nil
	}
	p.end = len(w.b)
	w.used += p.size()
	if short := 4 - p.pnLen - (p.end - p.payload); short > 0 {
		w.b = append(w.b, zeros[:short]...)
		p.end, p.padded = len(w.b), true
	}
	w.n++
	return p
}

// abandonPacket drops the current packet.
func (w *packetWriter) abandonPacket() {
	w.b = w.b[:w.tail()]
}

// padDatagram pads the Initial packet where RFC 9000 section 14.1 requires
// a datagram of 1200 bytes: one with a client's Initial packet, or a
// server's ack-eliciting one. The padding goes into the Initial packet
// itself rather than a packet coalesced after it: a 0-RTT or 1-RTT packet
// padded instead would spend the peer's flow of application packets (and
// count as application bytes to an observer) on nothing.
func (w *packetWriter) padDatagram(isClient bool) {
	for i, p := range w.packets() {
		if p.space == spaceInitial && (isClient || p.ackEliciting) {
			w.padPacket(i, minInitialDatagram)
			return
		}
	}
}

// padPacket appends PADDING to finished packet i, moving the packets after
// it, until the sealed datagram is n bytes long.
func (w *packetWriter) padPacket(i, n int) {
	if i == w.n-1 {
		w.padTo(n)
		return
	}
	short := n - len(w.b) - crypto.TagLen
	if short <= 0 {
		return
	}
	at, old := w.pkts[i].end, len(w.b)
	for len(w.b) < old+short {
		w.b = append(w.b, zeros[:min(old+short-len(w.b), len(zeros))]...)
	}
	copy(w.b[at+short:], w.b[at:old])
	clear(w.b[at : at+short])
	w.pkts[i].end += short
	w.pkts[i].padded = true
	for j := i + 1; j < w.n; j++ {
		p := &w.pkts[j]
		p.start, p.payload, p.end = p.start+short, p.payload+short, p.end+short
	}
	w.end += short
}

// padTo appends PADDING to the last packet until the sealed datagram is n
// bytes long.
func (w *packetWriter) padTo(n int) {
	last := &w.pkts[w.n-1]
	for short := n - len(w.b) - crypto.TagLen; short > 0; short = n - len(w.b) - crypto.TagLen {
		w.b = append(w.b, zeros[:min(short, len(zeros))]...)
		last.end, last.padded = len(w.b), true
	}
}

// markSource makes the current packet, written within fecReserve, a FEC
// source symbol: its frames move to make room for FEC_SOURCE_ID with
// sequence number seq in front (fec_send.go), after pad bytes of PADDING
// (fec_pad.go), which the reserve holds too.
func (w *packetWriter) markSource(seq uint64, pad int) {
	id := wire.FECSourceIDFrame{Seq: seq}
	n := id.Len()
	if n > fecMaxSourceIDLen {
		return // sequence numbers beyond 2^30: sent unprotected
	}
	if n+pad > w.room()+fecReserve {
		pad = 0 // the datagram has no room for it
	}
	var enc [fecMaxSourceIDLen]byte
	if _, err := id.Append(enc[:0]); err != nil {
		return
	}
	head := pad + n
	w.b = append(w.b, zeros[:head]...)
	payload := w.b[w.pkts[w.n].payload:]
	copy(payload[head:], payload[:len(payload)-head])
	clear(payload[:pad])
	copy(payload[pad:], enc[:n])
	w.record(sentFrame{kind: fkFECSourceID, id: seq})
}

// payloadLen is the length of the current packet's frames so far.
func (w *packetWriter) payloadLen() int { return len(w.b) - w.pkts[w.n].payload }

// appendCrypto appends CRYPTO frames of buf: lost data first, then new
// data.
func (w *packetWriter) appendCrypto(buf *sendBuffer) {
	for buf.hasPending(wire.MaxVarint) {
		off := buf.next
		if buf.hasLost() {
			off = buf.lost.min()
		}
		n, ok := wire.MaxCryptoDataLen(w.room(), off)
		if !ok || n == 0 {
			break
		}
		rg, _ := buf.nextRange(uint64(n), wire.MaxVarint)
		f := wire.CryptoFrame{Offset: rg.lo, Data: w.streamBytes(buf, rg)}
		if !w.appendFrame(f.Len(), f.Append) {
			break
		}
		w.record(sentFrame{kind: fkCrypto, off: rg.lo, n: rg.len()})
	}
}

// appendStreamFrame appends STREAM frame f with the bytes rg of buf as
// its data, if it fits. The bytes are copied once, from the send buffer's
// blocks straight into the packet, also when they straddle two blocks.
func (w *packetWriter) appendStreamFrame(f *wire.StreamFrame, buf *sendBuffer, rg span) bool {
	n := int(rg.len())
	if f.HeaderLen(n)+n > w.room() {
		return false
	}
	b, err := f.AppendHeader(w.b, n)
	if err != nil {
		w.fail(err)
		return false
	}
	at := len(b)
	w.b = slices.Grow(b, n)[:at+n]
	buf.readAt(w.b[at:], rg.lo)
	return true
}

// streamBytes returns the bytes of rg for a frame: a view of the send
// buffer when they lie in one block, or else a copy in scratch space. The
// frame is appended, copying them into the packet, at once.
func (w *packetWriter) streamBytes(buf *sendBuffer, rg span) []byte {
	if data, ok := buf.view(rg.lo, rg.len()); ok {
		return data
	}
	n := int(rg.len())
	if cap(w.data) < n {
		w.data = make([]byte, n)
	}
	data := w.data[:n]
	buf.readAt(data, rg.lo)
	return data
}

// seal fills in the Length fields and protects every packet in place with
// its keys, and returns the datagram.
func (w *packetWriter) seal() ([]byte, error) {
	w.b = append(w.b, zeros[:crypto.TagLen]...)
	for i := range w.n {
		p := &w.pkts[i]
		if err := w.sealPacket(p, w.keys[i]); err != nil {
			return nil, fmt.Errorf("sealing a %v packet: %w", p.space, err)
		}
	}
	if w.inSpare {
		w.spare, w.inSpare = nil, false
	}
	return w.b, nil
}

// sealPacket protects p with k, its AEAD tag going into the room after
// it. The plaintext of a FEC source packet is kept for the encoder first.
func (w *packetWriter) sealPacket(p *plannedPacket, k packetProtector) error {
	if p.long() {
		length := uint64(p.pnLen + p.end - p.payload + crypto.TagLen)
		if err := wire.PutVarintWithLen(w.b[p.payload-p.pnLen-lengthFieldLen:], length, lengthFieldLen); err != nil {
			return err
		}
	}
	if p.fecSource {
		w.symbol = append(w.symbol[:0], w.b[p.payload:p.end]...)
	}
	pnOffset := p.hdrLen - p.pnLen
	// With exactly the tag's room as spare capacity, Protect seals in
	// place.
	_, err := k.Protect(w.b[p.start:p.end:p.end+crypto.TagLen], pnOffset, p.pn)
	return err
}

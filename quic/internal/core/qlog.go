package core

import (
	"encoding/hex"
	"io"
	"strconv"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// qlog output (draft-ietf-quic-qlog-main-schema, the JSON-SEQ serialization
// that qvis reads): records separated by RFC 7464 framing, 0x1E, a JSON
// object, a newline. The first record is the header; the events use the
// "category:event" names qvis knows (transport:packet_sent,
// transport:packet_received, and the recovery events of
// recovery_qlog.go: recovery:metrics_updated,
// recovery:congestion_state_updated, recovery:packet_lost), with times in
// milliseconds since the connection started.
const (
	qlogRecordSeparator = 0x1e
	qlogFileSchema      = "urn:ietf:params:qlog:file:sequential"
)

// qlogger writes a connection's qlog. It is nil when Config.Qlog is, and
// a failing writer turns it off: its methods then do nothing, so that the
// connection logs an event in one line whether or not a qlog is kept.
type qlogger struct {
	w      io.Writer // nil once a write failed
	start  time.Duration
	client bool              // the vantage point
	odcid  wire.ConnectionID // names the connection in the header
	header bool              // the header was written
	rec    []byte            // the record being written
	frames []byte            // received frames of the packet being processed
	nframe int
	cc     qlogRecovery // what the recovery events last logged
}

func newQlogger(w io.Writer, start time.Duration) *qlogger {
	if w == nil {
		return nil
	}
	return &qlogger{w: w, start: start}
}

// off reports whether nothing is logged: no qlog, or its writer failed.
func (q *qlogger) off() bool { return q == nil || q.w == nil }

// setTrace names the trace the header describes, which is written with the
// first event: the vantage point and the client's first Destination
// Connection ID.
func (q *qlogger) setTrace(isClient bool, odcid wire.ConnectionID) {
	if q != nil {
		q.client, q.odcid = isClient, odcid
	}
}

// begin starts an event record at now, writing the header first.
func (q *qlogger) begin(now time.Duration, name string) []byte {
	if !q.header {
		q.header = true
		q.writeHeader()
	}
	b := append(q.rec[:0], qlogRecordSeparator)
	b = append(b, `{"time":`...)
	b = appendMillis(b, now-q.start)
	b = append(b, `,"name":"`...)
	b = append(b, name...)
	b = append(b, `","data":{`...)
	return b
}

// end closes and writes a record.
func (q *qlogger) end(b []byte) {
	if q.w == nil {
		return // the header failed to write
	}
	b = append(b, "}}\n"...)
	q.write(b)
}

// write writes a record; a failing writer ends the qlog.
func (q *qlogger) write(b []byte) {
	q.rec = b
	if _, err := q.w.Write(b); err != nil {
		q.w = nil
	}
}

// writeHeader writes the header record: format, schema, and the trace
// with its vantage point and the original Destination Connection ID that
// names the connection.
func (q *qlogger) writeHeader() {
	vp := "server"
	if q.client {
		vp = "client"
	}
	b := append(q.rec[:0], qlogRecordSeparator)
	b = append(b, `{"qlog_version":"0.3","qlog_format":"JSON-SEQ","file_schema":"`...)
	b = append(b, qlogFileSchema...)
	b = append(b, `","serialization_format":"application/qlog+json-seq","title":"satquic","trace":{"vantage_point":{"type":"`...)
	b = append(b, vp...)
	b = append(b, `","name":"satquic"},"common_fields":{"ODCID":"`...)
	b = hex.AppendEncode(b, q.odcid.Bytes())
	b = append(b, `","group_id":"`...)
	b = hex.AppendEncode(b, q.odcid.Bytes())
	b = append(b, `","protocol_type":["QUIC"],"time_format":"relative","reference_time":0}}}`+"\n"...)
	q.write(b)
}

// appendMillis appends a duration in milliseconds with microsecond
// precision.
func appendMillis(b []byte, d time.Duration) []byte {
	return strconv.AppendFloat(b, float64(d)/float64(time.Millisecond), 'f', -1, 64)
}

// qlogPacketType is the qlog name of a packet type.
func qlogPacketType(pt wire.PacketType) string {
	switch pt {
	case wire.PacketTypeInitial:
		return "initial"
	case wire.PacketTypeHandshake:
		return "handshake"
	case wire.PacketType0RTT:
		return "0RTT"
	case wire.PacketTypeRetry:
		return "retry"
	case wire.PacketTypeVersionNegotiation:
		return "version_negotiation"
	}
	return "1RTT"
}

// appendQlogHeader appends the "header" member of a packet event.
func appendQlogHeader(b []byte, pt wire.PacketType, pn uint64) []byte {
	b = append(b, `"header":{"packet_type":"`...)
	b = append(b, qlogPacketType(pt)...)
	b = append(b, `","packet_number":`...)
	b = strconv.AppendUint(b, pn, 10)
	return append(b, '}')
}

// sentPacketType is the type of packet pn that this endpoint sent in space
// s: a client's application packets before its first 1-RTT one are 0-RTT.
func sentPacketType(s recovery.Space, pn uint64, isClient bool, early *earlyState) wire.PacketType {
	if s == spaceApp && isClient && !early.isOneRTT(pn) {
		return wire.PacketType0RTT
	}
	return packetTypeOfSpace(s)
}

// packetSent logs at now transport:packet_sent for packet p of size
// bytes with its frames.
func (q *qlogger) packetSent(now time.Duration, p *plannedPacket, size int, frames []sentFrame) {
	if q.off() {
		return
	}
	pt := packetTypeOfSpace(p.space)
	if p.early {
		pt = wire.PacketType0RTT
	}
	b := q.begin(now, "transport:packet_sent")
	b = appendQlogHeader(b, pt, p.pn)
	b = append(b, `,"raw":{"length":`...)
	b = strconv.AppendInt(b, int64(size), 10)
	b = append(b, `},"frames":[`...)
	for i, f := range frames {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendSentFrame(b, f)
	}
	if p.padded {
		if len(frames) > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"frame_type":"padding"}`...)
	}
	q.end(append(b, ']'))
}

// sentFrameNames are the qlog frame types of the sent-frame records.
var sentFrameNames = [...]string{
	fkAck: "ack", fkPing: "ping", fkCrypto: "crypto", fkStream: "stream",
	fkResetStream: "reset_stream", fkStopSending: "stop_sending", fkMaxData: "max_data",
	fkMaxStreamData: "max_stream_data", fkMaxStreamsBidi: "max_streams", fkMaxStreamsUni: "max_streams",
	fkDataBlocked: "data_blocked", fkStreamDataBlocked: "stream_data_blocked",
	fkStreamsBlockedBidi: "streams_blocked", fkStreamsBlockedUni: "streams_blocked",
	fkNewConnID: "new_connection_id", fkRetireConnID: "retire_connection_id",
	fkHandshakeDone: "handshake_done", fkPathResponse: "path_response", fkNewToken: "new_token",
	fkFECSourceID: "fec_source_id", fkFECRepair: "fec_repair", fkFECRecovered: "fec_recovered",
	fkPathProbe: "ping", fkBDP: "bdp_frame", fkDatagram: "datagram",
	fkAckFrequency: "ack_frequency", fkImmediateAck: "immediate_ack",
	fkPathChallenge: "path_challenge",
}

func appendSentFrame(b []byte, f sentFrame) []byte {
	name := "unknown"
	if int(f.kind) < len(sentFrameNames) && sentFrameNames[f.kind] != "" {
		name = sentFrameNames[f.kind]
	}
	b = append(b, `{"frame_type":"`...)
	b = append(b, name...)
	b = append(b, '"')
	switch f.kind {
	case fkStream:
		b = appendStreamFields(b, f.id, f.off, f.n, f.fin)
	case fkCrypto:
		b = appendRange(b, f.off, f.n)
	case fkResetStream, fkStopSending, fkMaxStreamData, fkStreamDataBlocked:
		b = append(b, `,"stream_id":`...)
		b = strconv.AppendUint(b, f.id, 10)
	case fkNewConnID, fkRetireConnID:
		b = append(b, `,"sequence_number":`...)
		b = strconv.AppendUint(b, f.id, 10)
	case fkMaxStreamsBidi, fkStreamsBlockedBidi:
		b = append(b, `,"stream_type":"bidirectional"`...)
	case fkMaxStreamsUni, fkStreamsBlockedUni:
		b = append(b, `,"stream_type":"unidirectional"`...)
	case fkDatagram:
		b = appendLength(b, f.n)
	}
	return append(b, '}')
}

func appendStreamFields(b []byte, id, off, n uint64, fin bool) []byte {
	b = append(b, `,"stream_id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = appendRange(b, off, n)
	if fin {
		b = append(b, `,"fin":true`...)
	}
	return b
}

func appendRange(b []byte, off, n uint64) []byte {
	b = append(b, `,"offset":`...)
	b = strconv.AppendUint(b, off, 10)
	return appendLength(b, n)
}

func appendLength(b []byte, n uint64) []byte {
	b = append(b, `,"length":`...)
	return strconv.AppendUint(b, n, 10)
}

// frameReceived records a received frame for the packet_received event
// of the packet being processed.
func (q *qlogger) frameReceived(f wire.Frame) {
	if q.off() {
		return
	}
	b := q.frames
	if q.nframe > 0 {
		b = append(b, ',')
	}
	q.nframe++
	b = append(b, `{"frame_type":"`...)
	b = append(b, qlogFrameName(f.Type())...)
	b = append(b, '"')
	switch f := f.(type) {
	case *wire.StreamFrame:
		b = appendStreamFields(b, f.StreamID, f.Offset, uint64(len(f.Data)), f.Fin)
	case *wire.CryptoFrame:
		b = appendRange(b, f.Offset, uint64(len(f.Data)))
	case *wire.AckFrame:
		b = append(b, `,"acked_ranges":[`...)
		for i := len(f.Ranges) - 1; i >= 0; i-- {
			b = append(b, '[')
			b = strconv.AppendUint(b, f.Ranges[i].Smallest, 10)
			b = append(b, ',')
			b = strconv.AppendUint(b, f.Ranges[i].Largest, 10)
			b = append(b, ']')
			if i > 0 {
				b = append(b, ',')
			}
		}
		b = append(b, ']')
		if f.HasECN {
			b = append(b, `,"ect0":`...)
			b = strconv.AppendUint(b, f.ECN.ECT0, 10)
			b = append(b, `,"ect1":`...)
			b = strconv.AppendUint(b, f.ECN.ECT1, 10)
			b = append(b, `,"ce":`...)
			b = strconv.AppendUint(b, f.ECN.CE, 10)
		}
	case *wire.ConnectionCloseFrame:
		b = append(b, `,"error_code":`...)
		b = strconv.AppendUint(b, f.ErrorCode, 10)
	case *wire.DatagramFrame:
		b = appendLength(b, uint64(len(f.Data)))
	}
	q.frames = append(b, '}')
}

// qlogFrameName is the qlog name of a frame type (RFC 9000 section 19).
func qlogFrameName(t wire.FrameType) string {
	switch {
	case t.IsStream():
		return "stream"
	case t.IsAck():
		return "ack"
	case t.IsConnectionClose():
		return "connection_close"
	case t.IsDatagram():
		return "datagram"
	}
	switch t {
	case wire.FrameTypePadding:
		return "padding"
	case wire.FrameTypePing:
		return "ping"
	case wire.FrameTypeResetStream:
		return "reset_stream"
	case wire.FrameTypeStopSending:
		return "stop_sending"
	case wire.FrameTypeCrypto:
		return "crypto"
	case wire.FrameTypeNewToken:
		return "new_token"
	case wire.FrameTypeMaxData:
		return "max_data"
	case wire.FrameTypeMaxStreamData:
		return "max_stream_data"
	case wire.FrameTypeMaxStreamsBidi, wire.FrameTypeMaxStreamsUni:
		return "max_streams"
	case wire.FrameTypeDataBlocked:
		return "data_blocked"
	case wire.FrameTypeStreamDataBlocked:
		return "stream_data_blocked"
	case wire.FrameTypeStreamsBlockedBidi, wire.FrameTypeStreamsBlockedUni:
		return "streams_blocked"
	case wire.FrameTypeNewConnectionID:
		return "new_connection_id"
	case wire.FrameTypeRetireConnectionID:
		return "retire_connection_id"
	case wire.FrameTypePathChallenge:
		return "path_challenge"
	case wire.FrameTypePathResponse:
		return "path_response"
	case wire.FrameTypeHandshakeDone:
		return "handshake_done"
	case wire.FrameTypeBDP:
		return "bdp_frame"
	case wire.FrameTypeAckFrequency:
		return "ack_frequency"
	case wire.FrameTypeImmediateAck:
		return "immediate_ack"
	}
	return "unknown"
}

// packetReceived logs at now transport:packet_received for packet pn of
// type pt and size bytes, with the frames recorded while it was processed.
func (q *qlogger) packetReceived(now time.Duration, pt wire.PacketType, pn uint64, size int) {
	if q.off() {
		return
	}
	b := q.begin(now, "transport:packet_received")
	b = appendQlogHeader(b, pt, pn)
	b = append(b, `,"raw":{"length":`...)
	b = strconv.AppendInt(b, int64(size), 10)
	b = append(b, `},"frames":[`...)
	b = append(b, q.frames...)
	q.frames, q.nframe = q.frames[:0], 0
	q.end(append(b, ']'))
}

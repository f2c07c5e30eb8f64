package core

import "github.com/satquic/satquic/quic/internal/wire"

// frameScratch holds the flow control frames the packetizer appends most
// often (a bulk transfer's receiver sends MAX_DATA and MAX_STREAM_DATA
// every few packets). fits takes a wire.Frame, and a frame built on the
// caller's stack and passed as one escapes to the heap; built here, in
// the connection, it costs no allocation.
type frameScratch struct {
	maxData           wire.MaxDataFrame
	dataBlocked       wire.DataBlockedFrame
	maxStreams        wire.MaxStreamsFrame
	maxStreamData     wire.MaxStreamDataFrame
	streamDataBlocked wire.StreamDataBlockedFrame
}

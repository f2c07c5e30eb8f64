package bench

import (
	"io"

	"github.com/satquic/satquic/bench/bulkproto"
)

// The bulk experiment's wire protocol and child-process protocol, which
// the satquic and tcp-tls peers (bulk_server.go, bulk_client.go) and
// internal/cmd/quicgo-peer's bulk-server and bulk-client speak alike:
//
//   - on the wire, the client opens a bidirectional stream (QUIC) or a
//     TLS connection (TCP) and sends the size it wants as 8 bytes, big
//     endian; the server answers with that many bytes of BulkChunk,
//     repeated, and ends the stream (or closes the connection). ALPN
//     BulkALPN.
//   - a server child prints {"listening":"HOST:PORT"} once it listens;
//     then, for each line "mem" it reads on its standard input, one
//     MemReport line; it exits when its standard input ends.
//   - a client child prints one BulkClientReport line when its download
//     is done (or, holding idle connections, once they are all open, and
//     closes them when its standard input ends).

// The protocol lives in bench/bulkproto, shared with the quic-go peers;
// these are its names as this package's code and API use them.

// BulkALPN is the ALPN of the bulk protocol, in every stack.
const BulkALPN = bulkproto.ALPN

// maxBulkSize bounds what a request may ask for.
const maxBulkSize = bulkproto.MaxSize

// BulkChunk is what a bulk server writes, over and over.
var BulkChunk = bulkproto.Chunk

// MemReport is a server's memory after a collection (bulkproto.MemReport).
type MemReport = bulkproto.MemReport

// ParseBulkRequest reads the size a client asks for.
func ParseBulkRequest(r io.Reader) (int64, error) { return bulkproto.ParseRequest(r) }

type lockedWriter = bulkproto.JSONLines

var (
	writeBulkRequest = bulkproto.WriteRequest
	writeBulk        = bulkproto.Write
	readBulk         = bulkproto.Read
	serveMemRequests = bulkproto.ServeMemRequests
)

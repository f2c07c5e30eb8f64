// Package http3 is HTTP/3 (RFC 9114) over satquic's QUIC transport, with
// QPACK (RFC 9204) header compression of its own with the static table
// only (qpack.go): the decoder keeps the strings it decoded last by their
// encoded form, so that the authority, paths and content types a peer
// repeats are not decoded and allocated again; quic-go's QPACK is the
// tests' reference.
//
// A Server serves any http.Handler: request bodies reach the handler as
// they arrive and responses leave as the handler writes them (a handler's
// small responses are gathered into one DATA frame with a
// content-length), with trailers, http.Flusher and http.ResponseController
// deadlines. Shutdown stops it gracefully with GOAWAY.
//
// A Server bounds what a client can make it hold. Its QUIC
// configuration's MaxIncomingStreams bounds the request streams a
// connection has open at once (default 100: the QUIC layer grants no more
// in MAX_STREAMS, RFC 9000 section 4.6); MaxHeaderBytes bounds one
// request's header, MaxConnHeaderBytes the header data of one
// connection's streams together, and MaxRequestMemory the request data
// buffered by the whole server, beyond which the incomplete headers that
// waited longest are reset and new streams refused with
// H3_REQUEST_REJECTED. ReadHeaderTimeout cuts off a stream whose header
// does not arrive whole in time, IdleStreamTimeout one whose client
// sends nothing while the server waits for its request, and
// ResponseStallTimeout a response that the client stopped reading. A
// stream cut off or refused holds no goroutine and no buffer after it;
// Server.Stats counts them.
//
// A Transport is an http.RoundTripper: it keeps one connection per
// authority for concurrent requests, streams request and response
// bodies, carries trailers both ways, cancels a request's stream when its
// context ends or its response Body is closed early, and sends a request
// refused by GOAWAY again on a new connection.
//
// 0-RTT (early.go): a Transport with a ClientSessionCache resumes sessions
// and sends requests with a safe method in 0-RTT where the ticket allows
// it; a Server on an early Listener (quic.Transport.ListenEarly, which
// Server.Listen uses when QUICConfig.Allow0RTT is set) answers them in
// 0.5-RTT, one round trip from the start of the connection. Requests with
// other methods are neither sent nor served before the handshake
// completed, so that a replay of early data never runs them.
//
// Extended CONNECT and HTTP datagrams (connect_server.go,
// connect_client.go, stream.go, datagram.go, capsule.go): a Server with
// EnableExtendedConnect announces SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC
// 9220 section 3), and its handlers take the stream of an extended
// CONNECT (r.Proto is the :protocol) through HTTPStreamer once they
// answered 2xx; a Transport's ExtendedConnect sends one only after the
// server's SETTINGS allowed it. The Stream carries the DATA frames'
// payloads, a capsule stream (RFC 9297 section 3, ReadCapsule and
// WriteCapsule, each capsule's payload bounded), and, with
// EnableDatagrams at both ends and QUIC DATAGRAM frames negotiated, the
// HTTP datagrams bound to it (RFC 9297 section 2). One goroutine per
// connection takes the waiting datagrams in batches and hands them to
// their streams by Quarter Stream ID, into a bounded queue each; the ones
// for no open stream or a full queue are dropped and counted, and a
// malformed one closes the connection with H3_DATAGRAM_ERROR. A tunnel's
// reader borrows them in the buffers the QUIC connection received them in
// (HoldDatagram) and gives those back after writing the packets into its
// device (ReleaseDatagrams), or copies them out (ReadDatagram) so that
// their buffers go back at once, and its sender hands a batch over with a prefix
// of its own (SendPrefixedDatagrams) that the connection joins to each as
// it queues them, or hands over the batch's buffers themselves
// (GivePrefixedDatagrams), which the connection's queue keeps: no
// allocation or copy per packet in this package. A tunnel outlives its handler and the idle timeout
// of request streams, and counts against MaxIncomingStreams until it is
// closed.
//
// Both ends offer QPACK no dynamic table and use none of the peer's, so
// they open no QPACK streams: RFC 9204 section 4.2 allows it, and header
// compression then costs no state and no head-of-line blocking. Server
// push is never allowed. Malformed frames and messages close the stream
// or the connection with the error code RFC 9114 names; no frame is
// buffered beyond the header size limits and the memory budgets.
package http3

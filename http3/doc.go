// Package http3 is HTTP/3 (RFC 9114) over satquic's QUIC transport, with
// QPACK (RFC 9204) header compression from github.com/quic-go/qpack.
//
// A Server serves any http.Handler: request bodies reach the handler as
// they arrive and responses leave as the handler writes them (a handler's
// small responses are gathered into one DATA frame with a
// content-length), with trailers, http.Flusher and http.ResponseController
// deadlines. Its QUIC configuration's MaxIncomingStreams bounds the
// requests a connection has under way, MaxHeaderBytes the size of a
// request's header, and Shutdown stops it gracefully with GOAWAY.
//
// A Transport is an http.RoundTripper: it keeps one connection per
// authority for concurrent requests, streams request and response
// bodies, carries trailers both ways, cancels a request's stream when its
// context ends or its response Body is closed early, and sends a request
// refused by GOAWAY again on a new connection.
//
// Both ends offer QPACK no dynamic table and use none of the peer's, so
// they open no QPACK streams: RFC 9204 section 4.2 allows it, and header
// compression then costs no state and no head-of-line blocking. Server
// push is never allowed. Malformed frames and messages close the stream
// or the connection with the error code RFC 9114 names; no frame is
// buffered beyond the header size limits.
package http3

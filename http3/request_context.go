package http3

import (
	"context"
	"net"
	"net/http"
)

// A server request's context ends when the request is done, when its
// stream is reset, and when the connection ends. It used to be a child of
// the connection's context, which ended it with the connection; but then
// every request added itself to the connection context's map of children
// and removed itself again, on a lock all the connection's requests
// share, a fortieth of a server's time. Now, without
// Server.ConnContext, a request's context derives from a base without
// the connection's cancellation (context.WithoutCancel), and the
// connection ends the contexts of the requests it admitted, which it
// lists anyway, with the connection context's cause: what a handler sees
// is the same, Err and context.Cause included.

// requestContext makes the context of rs's request, with the function
// that ends it.
func (sc *serverConn) requestContext(rs *requestStream) (context.Context, context.CancelCauseFunc) {
	base, detached := sc.requestBase()
	ctx, cancel := context.WithCancelCause(base)
	if !detached {
		return ctx, cancel
	}
	rs.cancel = cancel
	rs.ctxMade.Store(true)
	// cancelRequests, had it run already, did not see this context: the
	// connection's context ended before the Store, so Err says so now.
	if qctx := sc.qc.Context(); qctx.Err() != nil {
		cancel(context.Cause(qctx))
	}
	return ctx, cancel
}

// cancelRequests ends the contexts of the connection's requests when the
// connection ends, with its cause.
func (sc *serverConn) cancelRequests() {
	cause := context.Cause(sc.qc.Context())
	var cancels []context.CancelCauseFunc
	sc.mu.Lock()
	for rs := sc.requests; rs != nil; rs = rs.next {
		if rs.ctxMade.Load() {
			cancels = append(cancels, rs.cancel)
		}
	}
	sc.mu.Unlock()
	for _, cancel := range cancels {
		cancel(cause)
	}
}

// listLocked adds an admitted request to the connection's list.
func (sc *serverConn) listLocked(rs *requestStream) {
	rs.prev, rs.next = nil, sc.requests
	if sc.requests != nil {
		sc.requests.prev = rs
	}
	sc.requests = rs
}

// unlistLocked takes a request that is done off the list.
func (sc *serverConn) unlistLocked(rs *requestStream) {
	if rs.prev != nil {
		rs.prev.next = rs.next
	} else if sc.requests == rs {
		sc.requests = rs.next
	}
	if rs.next != nil {
		rs.next.prev = rs.prev
	}
	rs.prev, rs.next = nil, nil
}

// requestBase returns the context a request's context derives from, and
// whether it is detached from the connection's cancellation, which
// cancelRequests then brings: with ConnContext, ConnContext's context,
// which may end on its own, as a parent; without, the connection's
// values without its cancellation. Either has the local address as
// net/http gives it (http.LocalAddrContextKey). Without ConnContext it
// is made once per local address of the connection rather than for each
// request.
func (sc *serverConn) requestBase() (ctx context.Context, detached bool) {
	local := sc.qc.LocalAddr()
	if sc.s.ConnContext != nil {
		return context.WithValue(sc.s.ConnContext(sc.qc.Context(), sc.qc), http.LocalAddrContextKey, local), false
	}
	udp, ok := local.(*net.UDPAddr)
	if !ok {
		return context.WithValue(sc.qc.Context(), http.LocalAddrContextKey, local), false
	}
	if b := sc.base.Load(); b != nil && b.local == udp {
		return b.ctx, true
	}
	b := &baseContext{local: udp, ctx: context.WithValue(context.WithoutCancel(sc.qc.Context()), http.LocalAddrContextKey, local)}
	sc.base.Store(b)
	return b.ctx, true
}

// baseContext is a connection's requestBase for one local address.
type baseContext struct {
	local *net.UDPAddr
	ctx   context.Context
}

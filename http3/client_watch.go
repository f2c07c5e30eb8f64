package http3

import (
	"context"
	"reflect"
)

// A client request is canceled when its context ends. A context.AfterFunc
// per request cost a client that sends request after request with one
// context (a worker's, a server's lifetime) a tenth of its processor
// time: the registration and its removal each take the context's lock
// and change its map of children. So the requests of a connection that
// share a context share one AfterFunc, a ctxWatch, which stays
// registered while the context is in use and, once a context served more
// than one request, while it waits for the next one: a connection keeps
// up to maxIdleWatches of those, and stops the one that waited longest
// beyond that. A context used for one request only (the usual context
// with a timeout per request) costs what an AfterFunc per request cost
// and a map insert: its watch stops with the request, and the
// connection remembers its address, not the context, so that it keeps
// the watch of the context's second request.

// maxIdleWatches bounds the watches a connection keeps for contexts with
// no request under way: more than the concurrent requests of a client
// that gives each of its workers a context of its own.
const maxIdleWatches = 1024

// ctxWatch is the AfterFunc of a context, with the requests of the
// connection it cancels when the context ends.
type ctxWatch struct {
	ctx  context.Context
	stop func() bool
	uses int // requests it watched

	head *clientStream // the requests under way, linked by watchNext

	// The connection's list of idle watches, oldest first, while head
	// is nil.
	idlePrev, idleNext *ctxWatch
	idle               bool
}

// watchSet is a connection's watches, guarded by the clientConn's lock.
type watchSet struct {
	byCtx              map[context.Context]*ctxWatch
	usedOnce           map[uintptr]struct{} // addresses of contexts whose watch stopped after one request
	idleHead, idleTail *ctxWatch
	idleCount          int
	closed             bool // the connection ended: no watch idles
}

// sharable reports a context that may key a map: one whose type is a
// pointer, as the standard library's are. Another type may be a struct
// whose hash panics.
func sharable(ctx context.Context) bool {
	return reflect.TypeOf(ctx).Kind() == reflect.Pointer
}

// watchLocked makes cs canceled when ctx ends: through the connection's
// watch of ctx, or an AfterFunc of its own for a context that cannot be
// shared. The caller holds cc.mu and calls it once per request, whose
// context can end (ctx.Done() != nil).
func (cc *clientConn) watchLocked(cs *clientStream, ctx context.Context) {
	if !sharable(ctx) {
		cs.stop = context.AfterFunc(ctx, func() { cs.abort(ctx.Err()) })
		return
	}
	ws := &cc.watches
	w := ws.byCtx[ctx]
	if w == nil {
		w = &ctxWatch{ctx: ctx}
		if _, ok := ws.usedOnce[contextAddr(ctx)]; ok {
			w.uses = 1
		}
		// Should ctx have ended already, the AfterFunc runs at once on
		// a goroutine of its own, which waits for cc.mu.
		w.stop = context.AfterFunc(ctx, func() { cc.contextDone(w) })
		if ws.byCtx == nil {
			ws.byCtx = make(map[context.Context]*ctxWatch)
		}
		ws.byCtx[ctx] = w
	} else if w.idle {
		ws.unidle(w)
	}
	w.uses++
	cs.watch = w
	cs.watchPrev, cs.watchNext = nil, w.head
	if w.head != nil {
		w.head.watchPrev = cs
	}
	w.head = cs
}

// unwatchLocked takes cs off its context's watch as its request ends.
// The watch, left without requests, waits for the next request of its
// context if it served more than one; else, or beyond maxIdleWatches,
// a watch is stopped.
func (cc *clientConn) unwatchLocked(cs *clientStream) {
	if cs.stop != nil {
		cs.stop()
		return
	}
	w := cs.watch
	if w == nil {
		return
	}
	cs.watch = nil
	if cs.watchPrev != nil {
		cs.watchPrev.watchNext = cs.watchNext
	} else {
		w.head = cs.watchNext
	}
	if cs.watchNext != nil {
		cs.watchNext.watchPrev = cs.watchPrev
	}
	cs.watchPrev, cs.watchNext = nil, nil
	if w.head != nil {
		return
	}
	ws := &cc.watches
	if w.uses < 2 || ws.closed {
		ws.drop(w)
		ws.rememberUsedOnce(w.ctx)
		return
	}
	ws.pushIdle(w)
	if ws.idleCount > maxIdleWatches {
		ws.drop(ws.idleHead)
	}
}

// contextDone cancels the requests under way with w's context, which
// ended.
func (cc *clientConn) contextDone(w *ctxWatch) {
	cc.mu.Lock()
	ws := &cc.watches
	if ws.byCtx[w.ctx] == w {
		delete(ws.byCtx, w.ctx)
	}
	if w.idle {
		ws.unidle(w)
	}
	var canceled []*clientStream
	for cs := w.head; cs != nil; cs = cs.watchNext {
		canceled = append(canceled, cs)
	}
	for _, cs := range canceled {
		cs.watch, cs.watchPrev, cs.watchNext = nil, nil, nil
	}
	w.head = nil
	cc.mu.Unlock()
	for _, cs := range canceled {
		cs.abort(w.ctx.Err())
	}
}

// closeWatches stops the idle watches when the connection ended, and
// makes the watches of requests still under way stop with them.
func (cc *clientConn) closeWatches() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	ws := &cc.watches
	ws.closed = true
	for ws.idleHead != nil {
		ws.drop(ws.idleHead)
	}
}

// contextAddr is the address of a sharable context: another context may
// take it once the garbage collector freed this one, which at worst
// keeps the other's watch idle after its first request.
func contextAddr(ctx context.Context) uintptr { return reflect.ValueOf(ctx).Pointer() }

// rememberUsedOnce notes the address of a context whose watch stopped
// after one request, forgetting all of them when maxIdleWatches are
// noted.
func (ws *watchSet) rememberUsedOnce(ctx context.Context) {
	if ws.usedOnce == nil {
		ws.usedOnce = make(map[uintptr]struct{})
	}
	if len(ws.usedOnce) >= maxIdleWatches {
		clear(ws.usedOnce)
	}
	ws.usedOnce[contextAddr(ctx)] = struct{}{}
}

// drop stops w and forgets it.
func (ws *watchSet) drop(w *ctxWatch) {
	w.stop()
	if w.idle {
		ws.unidle(w)
	}
	if ws.byCtx[w.ctx] == w {
		delete(ws.byCtx, w.ctx)
	}
}

func (ws *watchSet) pushIdle(w *ctxWatch) {
	w.idle = true
	w.idlePrev, w.idleNext = ws.idleTail, nil
	if ws.idleTail != nil {
		ws.idleTail.idleNext = w
	} else {
		ws.idleHead = w
	}
	ws.idleTail = w
	ws.idleCount++
}

func (ws *watchSet) unidle(w *ctxWatch) {
	if w.idlePrev != nil {
		w.idlePrev.idleNext = w.idleNext
	} else {
		ws.idleHead = w.idleNext
	}
	if w.idleNext != nil {
		w.idleNext.idlePrev = w.idlePrev
	} else {
		ws.idleTail = w.idlePrev
	}
	w.idlePrev, w.idleNext, w.idle = nil, nil, false
	ws.idleCount--
}

package core

import (
	"net/netip"
	"strconv"
	"time"
)

// pathUpdated logs a step of path validation or migration as the qlog
// QUIC event schema's migration_state_updated (draft-ietf-quic-qlog-quic-
// events, in the connectivity category of qlog 0.3): state is one of
// probing_started, probing_abandoned, migration_started,
// migration_abandoned and migration_complete; old and next are the peer
// addresses before and after.
func (q *qlogger) pathUpdated(now time.Duration, state string, old, next netip.AddrPort) {
	if q.off() {
		return
	}
	b := q.begin(now, "connectivity:migration_state_updated")
	b = append(b, `"state":`...)
	b = strconv.AppendQuote(b, state)
	b = append(b, `,"old":`...)
	b = strconv.AppendQuote(b, old.String())
	b = append(b, `,"new":`...)
	b = strconv.AppendQuote(b, next.String())
	q.end(b)
}

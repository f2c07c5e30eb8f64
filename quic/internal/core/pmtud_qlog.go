package core

import (
	"strconv"
	"time"
)

// mtuUpdated logs at now recovery:mtu_updated when path MTU discovery
// changes the datagram size (old to new) or ends its search (done).
func (q *qlogger) mtuUpdated(now time.Duration, old, next int, done bool) {
	if q.off() {
		return
	}
	b := q.begin(now, "recovery:mtu_updated")
	b = append(b, `"old":`...)
	b = strconv.AppendInt(b, int64(old), 10)
	b = append(b, `,"new":`...)
	b = strconv.AppendInt(b, int64(next), 10)
	b = append(b, `,"done":`...)
	b = strconv.AppendBool(b, done)
	q.end(b)
}

package core

import (
	"strconv"
	"time"
)

// ecnStateUpdated logs at now recovery:ecn_state_updated when ECN
// validation moves from one state to another, with what moved it.
func (q *qlogger) ecnStateUpdated(now time.Duration, old, next ECNState, trigger string) {
	if q.off() {
		return
	}
	b := q.begin(now, "recovery:ecn_state_updated")
	b = append(b, `"old":"`...)
	b = append(b, old.String()...)
	b = append(b, `","new":"`...)
	b = append(b, next.String()...)
	b = append(b, `","trigger":`...)
	b = strconv.AppendQuote(b, trigger)
	q.end(b)
}

package core

import (
	"strconv"
	"time"
)

// qlogECNState logs recovery:ecn_state_updated when ECN validation moves
// from one state to another, with what moved it.
func (c *Conn) qlogECNState(now time.Duration, old, next ECNState, trigger string) {
	if c.qlog == nil {
		return
	}
	b := c.qlogBegin(now, "recovery:ecn_state_updated")
	b = append(b, `"old":"`...)
	b = append(b, old.String()...)
	b = append(b, `","new":"`...)
	b = append(b, next.String()...)
	b = append(b, `","trigger":`...)
	b = strconv.AppendQuote(b, trigger)
	c.qlogEnd(b)
}

package core

import "strconv"

// qlogECNState logs recovery:ecn_state_updated when ECN validation moves
// from one state to another, with what moved it.
func (c *Conn) qlogECNState(old, next ECNState, trigger string) {
	if c.qlog == nil {
		return
	}
	b := c.qlogBegin("recovery:ecn_state_updated")
	b = append(b, `"old":"`...)
	b = append(b, old.String()...)
	b = append(b, `","new":"`...)
	b = append(b, next.String()...)
	b = append(b, `","trigger":`...)
	b = strconv.AppendQuote(b, trigger)
	c.qlogEnd(b)
}

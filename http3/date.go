package http3

import (
	"net/http"
	"sync/atomic"
	"time"
)

// dateCache holds the value of the Date header a server adds to its
// responses (RFC 9110 section 6.6.1), which changes once a second:
// formatting it for every response cost a loaded server about 4% of its
// processor time.
type dateCache struct {
	last atomic.Pointer[formattedDate]
}

// formattedDate is one second's Date value.
type formattedDate struct {
	unix  int64
	value string
}

// format returns the Date value of now, in the IMF-fixdate form (RFC 9110
// section 5.6.7), formatting it only when the second changed.
func (c *dateCache) format(now time.Time) string {
	sec := now.Unix()
	if d := c.last.Load(); d != nil && d.unix == sec {
		return d.value
	}
	d := &formattedDate{unix: sec, value: now.UTC().Format(http.TimeFormat)}
	c.last.Store(d)
	return d.value
}

// responseDates is the Date values of every server of the process.
var responseDates dateCache

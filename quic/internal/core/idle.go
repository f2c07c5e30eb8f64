package core

import "time"

// idleState tracks the idle timeout (RFC 9000 section 10.1): the smaller of
// both endpoints' max_idle_timeout, restarted by every packet received and by
// the first ack-eliciting packet sent after one.
type idleState struct {
	local, peer   time.Duration // 0: no timeout from that endpoint
	last          time.Duration
	sentSinceRecv bool

	// active is the last time a packet was received or an ack-eliciting
	// packet sent, for keep-alives.
	active time.Duration
	ping   bool // a keep-alive PING is due
}

func (i *idleState) init(now, local time.Duration) {
	i.local, i.last = local, now
}

func (i *idleState) setPeer(d time.Duration) { i.peer = d }

func (i *idleState) onReceive(now time.Duration) {
	i.last, i.sentSinceRecv = now, false
	i.active = now
}

func (i *idleState) onSendEliciting(now time.Duration) {
	if !i.sentSinceRecv {
		i.last, i.sentSinceRecv = now, true
	}
	i.active = now
}

// keepAlive returns when a keep-alive PING is due with the given period
// (0: never).
func (i *idleState) keepAlive(period time.Duration) (time.Duration, bool) {
	if period <= 0 || i.ping {
		return 0, false
	}
	return i.active + period, true
}

// deadline is when the connection times out: never before three PTOs, so
// that a slow path is not cut short by a short timeout.
func (i *idleState) deadline(pto time.Duration) (time.Duration, bool) {
	timeout := i.local
	if i.peer > 0 && (timeout == 0 || i.peer < timeout) {
		timeout = i.peer
	}
	if timeout == 0 {
		return 0, false
	}
	return i.last + max(timeout, 3*pto), true
}

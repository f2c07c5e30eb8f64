package core

import "time"

// idleState tracks the idle timeout (RFC 9000 section 10.1): the smaller of
// both endpoints' max_idle_timeout, restarted by every packet received and by
// the first ack-eliciting packet sent after one. Once the handshake is
// confirmed, a keep-alive PING goes out after a period without activity
// (Config.KeepAlivePeriod, section 10.1.2).
type idleState struct {
	local, peer   time.Duration // 0: no timeout from that endpoint
	last          time.Duration
	sentSinceRecv bool

	// active is the last time a packet was received or an ack-eliciting
	// packet sent, for keep-alives every keepAlive (0: never).
	active    time.Duration
	keepAlive time.Duration
	ping      bool // a keep-alive PING is due
}

func (i *idleState) init(now, local, keepAlive time.Duration) {
	i.local, i.last, i.keepAlive = local, now, keepAlive
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

// pingTime returns when a keep-alive PING is due.
func (i *idleState) pingTime() (time.Duration, bool) {
	if i.keepAlive <= 0 || i.ping {
		return 0, false
	}
	return i.active + i.keepAlive, true
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

// timer is the earlier of the timeout and, once the handshake is
// confirmed, the next keep-alive.
func (i *idleState) timer(pto time.Duration, confirmed bool) (time.Duration, bool) {
	var d deadlines
	d.add(i.deadline(pto))
	if confirmed {
		d.add(i.pingTime())
	}
	return d.t, d.ok
}

// onTimer reports whether the connection timed out at now; otherwise it
// makes a keep-alive PING due when its time came.
func (i *idleState) onTimer(now, pto time.Duration, confirmed bool) (expired bool) {
	if t, ok := i.deadline(pto); ok && now >= t {
		return true
	}
	if t, ok := i.pingTime(); ok && confirmed && now >= t {
		i.ping = true
	}
	return false
}

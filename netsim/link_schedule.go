package netsim

import "time"

// linkDown reports whether t falls in one of the outages.
func linkDown(outages []Outage, t time.Duration) bool {
	for _, o := range outages {
		if t < o.Start {
			continue
		}
		since := t - o.Start
		if o.Repeat > 0 {
			since %= o.Repeat
		}
		if since < o.Duration {
			return true
		}
	}
	return false
}

// delayAt is the propagation delay in force at t: that of the delay step
// that fired last (the later one in the list on a tie), or base before any.
func delayAt(base time.Duration, steps []DelayStep, t time.Duration) time.Duration {
	delay, latest := base, time.Duration(-1)
	for _, s := range steps {
		if t < s.At {
			continue
		}
		fired := s.At
		if s.Every > 0 {
			fired += (t - s.At) / s.Every * s.Every
		}
		if fired >= latest {
			delay, latest = s.Delay, fired
		}
	}
	return delay
}

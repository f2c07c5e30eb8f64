package recovery

import "time"

// lossDelay is max(kTimeThreshold * max(smoothed_rtt, latest_rtt),
// kGranularity) (RFC 9002 section 6.1.2).
func (s *Sender) lossDelay() time.Duration {
	d := max(s.rtt.latest, s.rtt.smoothed) * time.Duration(s.cfg.TimeThresholdNum) / time.Duration(s.cfg.TimeThresholdDen)
	return max(d, s.cfg.Granularity)
}

// watchLost is how long a lost packet's record is kept to recognize a late
// acknowledgement: one PTO period, after which an acknowledgement is no
// longer plausible.
func (s *Sender) watchLost() time.Duration {
	return s.rtt.ptoBase(s.cfg.Granularity) + s.rtt.maxAckDelay
}

// detectAndSignal runs loss detection in space and reports the losses to
// the controller (RFC 9002 appendix A.10 and B.9).
func (s *Sender) detectAndSignal(now time.Duration, space Space, sp *spaceState) {
	start := len(s.res.Lost)
	prior := s.bytesInFlight
	newest, ok := s.detectLost(now, space, sp)
	lost := s.res.Lost[start:]
	persistent := len(lost) > 0 && s.persistentCongestion(sp, lost)
	deferred := s.deferredBytes(space, lost)
	sp.compact()
	defer s.fireDeferred(now)
	if !ok && !persistent {
		return
	}
	s.res.PersistentCongestion = s.res.PersistentCongestion || persistent
	if persistent {
		s.stats.PersistentCongestions++
	}
	s.signal(now, CongestionEvent{
		Cause:           CauseLoss,
		LostBytes:       prior - s.bytesInFlight - unsignaledBytes(lost) - deferred,
		LargestSentTime: newest,
		Persistent:      persistent,
		PriorInFlight:   prior,
		BytesInFlight:   s.bytesInFlight,
		Handshake:       space == SpaceInitial || space == SpaceHandshake,
	})
}

// detectLost is appendix A.10's DetectAndRemoveLostPackets over the holes
// (the only candidates: outstanding packets at or below the largest
// acknowledged). It also arms the space's loss time and forgets lost
// records whose watch expired. It returns the send time of the newest lost
// in-flight packet, and whether there was one.
func (s *Sender) detectLost(now time.Duration, space Space, sp *spaceState) (newest time.Duration, inFlightLost bool) {
	sp.hasLossTime = false
	if !sp.hasLargestAcked {
		return 0, false
	}
	delay := s.lossDelay()
	watch := s.watchLost()
	keep := sp.holes[:0]
	for _, pn := range sp.holes {
		rec := sp.ring.at(pn)
		if rec == nil {
			continue
		}
		switch rec.state {
		case stateLost:
			if now >= rec.deadline {
				rec.state = stateLostExpired
				continue
			}
		case stateOutstanding:
			if t, lost := s.lossTimeOf(now, sp, rec, delay); !lost {
				sp.setLossTime(t)
			} else {
				s.autoDecideLoss(now, rec)
				if rec.has(flagInFlight) && !rec.lossUnsignaled() && !rec.has(flagDeferSignal) {
					newest, inFlightLost = rec.timeSent, true
				}
				s.markLost(now, sp, space, rec, watch)
			}
		default:
			continue
		}
		keep = append(keep, pn)
	}
	sp.holes = keep
	return newest, inFlightLost
}

// lossTimeOf decides whether an outstanding packet is lost now (section
// 6.1: packet or time threshold) and, if not, when it will be. A packet
// covered by a repair in flight is held until the repair's deadline,
// bounded by FECMaxHold (or the smoothed RTT, if longer) past the time
// threshold.
func (s *Sender) lossTimeOf(now time.Duration, sp *spaceState, rec *sentPacket, delay time.Duration) (time.Duration, bool) {
	byTime := rec.timeSent + delay
	met := byTime <= now || sp.largestAcked >= rec.number+s.cfg.PacketThreshold
	if !rec.has(flagCovered) {
		return byTime, met
	}
	holdEnd := min(rec.deadline, byTime+max(s.cfg.FECMaxHold, s.rtt.SmoothedRTT()))
	if met {
		if now >= holdEnd {
			return 0, true
		}
		if rec.flags&flagHeld == 0 {
			rec.flags |= flagHeld
			s.stats.CoveredLossesDelayed++
		}
		return holdEnd, false
	}
	return max(byTime, holdEnd), false
}

func (sp *spaceState) setLossTime(t time.Duration) {
	if !sp.hasLossTime || t < sp.lossTime {
		sp.lossTime, sp.hasLossTime = t, true
	}
}

func (s *Sender) markLost(now time.Duration, sp *spaceState, space Space, rec *sentPacket, watch time.Duration) {
	rec.state = stateLost
	rec.deadline = now + watch
	if rec.has(flagInFlight) {
		s.removeFromFlight(sp, rec)
		switch {
		case rec.has(flagDeferSignal):
			s.deferLoss(now, space, rec)
		case !rec.lossUnsignaled():
			s.rate.onLost(int64(rec.bytes))
		}
	}
	info := rec.info(space)
	info.LossTrigger = s.lossTrigger(sp, rec)
	s.res.Lost = append(s.res.Lost, info)
	s.observe(space, rec, false)
	s.stats.PacketsLost++
	s.stats.BytesLost += uint64(rec.bytes)
}

// persistentCongestion applies RFC 9002 section 7.6.2 to the packets just
// declared lost in one space: two ack-eliciting packets sent after the
// first RTT sample, more than the persistent congestion duration apart,
// with every packet sent between them lost. Earlier-lost packets may lie
// between them; an acknowledged or recovered one breaks the run. Other
// spaces are not consulted: persistent congestion needs an RTT sample, and
// once there is one, Initial and Handshake packets are soon discarded.
func (s *Sender) persistentCongestion(sp *spaceState, lost []PacketInfo) bool {
	if !s.rtt.hasSample {
		return false
	}
	return establishesPersistentCongestion(sp, lost, s.rtt.firstSampleTime,
		s.rtt.PersistentCongestionDuration(s.cfg.Granularity, s.cfg.PersistentCongestionThreshold))
}

func establishesPersistentCongestion(sp *spaceState, lost []PacketInfo, firstSample, duration time.Duration) bool {
	candidate := func(p *PacketInfo) bool {
		return p.AckEliciting && !p.PathProbe && !p.HiddenRepair && p.TimeSent > firstSample
	}
	var first, last *PacketInfo
	for i := range lost {
		if candidate(&lost[i]) {
			if first == nil {
				first = &lost[i]
			}
			last = &lost[i]
		}
	}
	// Cheap test first: the whole set must span more than the duration.
	if first == nil || last.TimeSent-first.TimeSent <= duration {
		return false
	}
	var start, prev *PacketInfo
	for i := range lost {
		p := &lost[i]
		if !candidate(p) {
			continue
		}
		if start != nil && !sp.allLostBetween(prev.Number, p.Number) {
			start = nil
		}
		if start == nil {
			start = p
		} else if p.TimeSent-start.TimeSent > duration {
			return true
		}
		prev = p
	}
	return false
}

// allLostBetween reports whether every packet numbered strictly between a
// and b was declared lost (or never sent).
func (sp *spaceState) allLostBetween(a, b uint64) bool {
	for pn := a + 1; pn < b; pn++ {
		rec := sp.ring.at(pn)
		if rec == nil {
			return false
		}
		switch rec.state {
		case stateLost, stateLostExpired, stateSkipped:
		default:
			return false
		}
	}
	return true
}

package core

import (
	"strconv"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// carefulResumePhaseUpdated logs at now
// recovery:careful_resume_phase_updated when Careful Resume moves from
// phase old to next (RFC 9959; the event and its fields follow
// draft-ietf-tsvwg-careful-resume-qlog): the saved state the connection
// resumed from, if any, and the congestion window now. windowSufficed
// gives the trigger congestion_window_limited: Reconnaissance ended
// because the window already reached the jump.
func (q *qlogger) carefulResumePhaseUpdated(now time.Duration, old, next recovery.ResumePhase, saved recovery.ResumeState, cwnd int, windowSufficed bool) {
	if q.off() {
		return
	}
	b := q.begin(now, "recovery:careful_resume_phase_updated")
	b = strconv.AppendQuote(append(b, `"old":`...), old.String())
	b = strconv.AppendQuote(append(b, `,"new":`...), next.String())
	if windowSufficed {
		b = append(b, `,"trigger":"congestion_window_limited"`...)
	}
	b = append(b, `,"state_data":{"congestion_window":`...)
	b = strconv.AppendInt(b, int64(cwnd), 10)
	b = append(b, '}')
	if saved.SavedCwnd > 0 {
		b = append(b, `,"restored_data":{"saved_congestion_window":`...)
		b = strconv.AppendInt(b, saved.SavedCwnd, 10)
		b = append(b, `,"saved_rtt":`...)
		b = appendMillis(b, saved.SavedRTT)
		b = append(b, '}')
	}
	q.end(b)
}

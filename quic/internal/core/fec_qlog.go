package core

import (
	"strconv"
	"time"

	"github.com/satquic/satquic/fec"
)

// repairSent logs at now fec:repair_sent with the window the repair
// covers, and what triggered it unless it was owed by the controller:
// "loss" (sources declared lost) or "probe" (a probe timeout).
func (q *qlogger) repairSent(now time.Duration, id fec.RepairID, trigger string) {
	if q.off() {
		return
	}
	b := q.begin(now, "fec:repair_sent")
	b = append(b, `"first_esi":`...)
	b = strconv.AppendUint(b, uint64(id.FirstESI), 10)
	b = append(b, `,"window":`...)
	b = strconv.AppendUint(b, uint64(id.NSS), 10)
	b = append(b, `,"repair_key":`...)
	b = strconv.AppendUint(b, uint64(id.Key), 10)
	if trigger != "" {
		b = append(b, `,"trigger":"`...)
		b = append(b, trigger...)
		b = append(b, '"')
	}
	q.end(b)
}

// symbolsRecovered logs at now fec:symbols_recovered when the decoder
// rebuilt n lost packets.
func (q *qlogger) symbolsRecovered(now time.Duration, n int) {
	if q.off() {
		return
	}
	b := q.begin(now, "fec:symbols_recovered")
	b = append(b, `"count":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	q.end(b)
}

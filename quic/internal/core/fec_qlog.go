package core

import (
	"strconv"
	"time"

	"github.com/satquic/satquic/fec"
)

// qlogRepairSent logs at now fec:repair_sent with the window the repair covers.
func (c *Conn) qlogRepairSent(now time.Duration, id fec.RepairID) {
	if c.qlog == nil {
		return
	}
	b := c.qlogBegin(now, "fec:repair_sent")
	b = append(b, `"first_esi":`...)
	b = strconv.AppendUint(b, uint64(id.FirstESI), 10)
	b = append(b, `,"window":`...)
	b = strconv.AppendUint(b, uint64(id.NSS), 10)
	b = append(b, `,"repair_key":`...)
	b = strconv.AppendUint(b, uint64(id.Key), 10)
	c.qlogEnd(b)
}

// qlogSymbolsRecovered logs at now fec:symbols_recovered when the decoder rebuilt
// lost packets.
func (c *Conn) qlogSymbolsRecovered(now time.Duration, n int) {
	if c.qlog == nil {
		return
	}
	b := c.qlogBegin(now, "fec:symbols_recovered")
	b = append(b, `"count":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	c.qlogEnd(b)
}

//go:build linux

package probe

import (
	"net/netip"
	"time"

	"github.com/satquic/satquic/emulate/internal/batchio"
	"github.com/satquic/satquic/emulate/internal/rtio"
)

const sendBatch = 64

// tick is the shortest sleep of the sender: datagrams due within a tick go
// out together, so that at hundreds of Mbit/s the sender wakes 5000 times
// a second, not once per datagram. The link's queue spaces them out again.
const tick = 200 * time.Microsecond

// maxCatchUp is how far behind its pacing the sender may fall and still
// send what it missed.
const maxCatchUp = time.Millisecond

// sendStats is what the sender reports.
type sendStats struct {
	packets      int
	highPriority bool
	// behind is the largest gap between a datagram's pacing time and its
	// departure: a sender that cannot keep the rate shows it here.
	behind time.Duration
	// skipped is the sending time lost to such gaps.
	skipped time.Duration
}

// send paces total datagrams at the configured rate from a high-priority
// thread. Datagrams whose time has come go out together in one system
// call; each carries the time it actually left.
func send(c *batchio.Conn, dst netip.AddrPort, clk rtio.Clock, cfg Config, total int) (sendStats, error) {
	type outcome struct {
		st  sendStats
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		// The thread is never unlocked: it leaves with the goroutine.
		st := sendStats{highPriority: rtio.LockThread(cfg.priority())}
		err := pace(c, dst, clk, cfg, total, &st)
		done <- outcome{st, err}
	}()
	o := <-done
	return o.st, o.err
}

func pace(c *batchio.Conn, dst netip.AddrPort, clk rtio.Clock, cfg Config, total int, st *sendStats) error {
	msgs := make([]batchio.Message, sendBatch)
	for i := range msgs {
		msgs[i] = batchio.Message{Buf: make([]byte, cfg.Size), Addr: dst}
	}
	gap := cfg.interval()
	start := clk.Now() + 5*time.Millisecond
	due := func(i int) time.Duration { return start + time.Duration(i)*gap }
	for i := 0; i < total; {
		if d := due(i); d > clk.Now() {
			clk.SleepUntil(d)
		}
		now := clk.Now()
		st.behind = max(st.behind, now-due(i))
		// A sender that woke late skips the time it lost rather than
		// bursting to catch up: a burst would overflow the link's queue
		// and show as loss the model never made.
		if late := now - due(i); late > maxCatchUp {
			start += late
			st.skipped += late
		}
		// Datagrams due within the coming tick leave now, stamped with
		// the time they actually leave.
		horizon := now + max(tick-gap, 0)
		k := 0
		for ; k < sendBatch && i+k < total && due(i+k) <= horizon; k++ {
			putData(msgs[k].Buf, uint64(i+k), now)
		}
		if _, err := c.WriteBatch(msgs[:k]); err != nil {
			return err
		}
		i += k
		st.packets = i
	}
	return nil
}

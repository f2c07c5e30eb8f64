package netsim

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestDuplicateMakesIndependentCopies(t *testing.T) {
	l := newTestLink(t, LinkConfig{Duplicate: 1, Delay: ms})
	l.OfferTagged(0, []byte("hello"), 77)
	a, ok1 := l.Deliver(ms)
	b, ok2 := l.Deliver(ms)
	if !ok1 || !ok2 || string(a.Data) != "hello" || string(b.Data) != "hello" {
		t.Fatalf("deliveries %q %v, %q %v", a.Data, ok1, b.Data, ok2)
	}
	if a.Tag != 77 || b.Tag != 77 {
		t.Errorf("tags %d and %d, want 77 on both copies", a.Tag, b.Tag)
	}
	a.Data[0] = 'j'
	if b.Data[0] != 'h' {
		t.Error("the duplicate shares the original's buffer")
	}
	if s := l.Stats(); s.Duplicated != 1 || s.Delivered != 2 || s.Offered != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestCorruptReplacesOneByteInRegion(t *testing.T) {
	l := newTestLink(t, LinkConfig{Corrupt: 1, CorruptRegion: 50, Seed: 3})
	orig := bytes.Repeat([]byte{0xAA}, 1200)
	for i := range 500 {
		l.Offer(time.Duration(i), bytes.Clone(orig))
		d, ok := l.Deliver(time.Duration(i))
		if !ok {
			t.Fatal("packet not delivered")
		}
		changed := 0
		for j := range d.Data {
			if d.Data[j] != orig[j] {
				changed++
				if j >= 50 {
					t.Fatalf("byte %d changed, outside the 50-byte region", j)
				}
			}
		}
		if changed != 1 {
			t.Fatalf("packet %d: %d bytes changed, want 1", i, changed)
		}
	}
	if s := l.Stats(); s.Corrupted != 500 {
		t.Errorf("corrupted %d, want 500", s.Corrupted)
	}
}

func TestMTU(t *testing.T) {
	l := newTestLink(t, LinkConfig{MTU: 1500})
	l.Offer(0, packet(0, 1500))
	l.Offer(0, packet(1, 1501))
	checkArrivals(t, drain(l), []arrival{{0, 0}})
	if s := l.Stats(); s.DroppedMTU != 1 {
		t.Errorf("MTU drops %d, want 1", s.DroppedMTU)
	}
}

func TestECNThreshold(t *testing.T) {
	// Marked when more than 3000 bytes wait ahead. Packets 0 to 5 find 0
	// (0 goes straight to the serializer), 0, 1500, 3000, 4500 and 6000.
	l := newTestLink(t, LinkConfig{RateBps: 10e6, ECNThreshold: 3000})
	for i := range 6 {
		l.Offer(0, packet(byte(i), 1500))
	}
	var marks []bool
	for {
		at, ok := l.Next()
		if !ok {
			break
		}
		d, _ := l.Deliver(at)
		marks = append(marks, d.CE)
	}
	if got := fmt.Sprint(marks); got != "[false false false false true true]" {
		t.Errorf("CE marks %s", got)
	}
	if s := l.Stats(); s.CEMarked != 2 {
		t.Errorf("CE marked %d, want 2", s.CEMarked)
	}
}

func TestLossSpecAppliesPerCopy(t *testing.T) {
	l := newTestLink(t, LinkConfig{Loss: "drop:1,3"})
	for i := range 5 {
		l.Offer(0, packet(byte(i), 10))
	}
	checkArrivals(t, drain(l), []arrival{{0, 0}, {2, 0}, {4, 0}})
	if s := l.Stats(); s.DroppedLoss != 2 {
		t.Errorf("loss drops %d", s.DroppedLoss)
	}
}

func TestJitterBoundsAndOrder(t *testing.T) {
	for _, reorder := range []bool{false, true} {
		l := newTestLink(t, LinkConfig{Delay: 20 * ms, Jitter: 5 * ms, Reorder: reorder, Seed: 11})
		sent := map[byte]time.Duration{}
		for i := range 200 {
			at := time.Duration(i) * 100 * time.Microsecond
			sent[byte(i)] = at
			l.Offer(at, packet(byte(i), 10))
		}
		got := drain(l)
		if len(got) != 200 {
			t.Fatalf("delivered %d", len(got))
		}
		overtaken := 0
		for i, a := range got {
			d := a.at - sent[a.id]
			if !reorder && i > 0 && a.id < got[i-1].id {
				t.Fatalf("order not kept: %d after %d", a.id, got[i-1].id)
			}
			if reorder && (d < 15*ms || d > 25*ms) {
				t.Fatalf("packet %d delayed %v, outside 20ms +- 5ms", a.id, d)
			}
			if !reorder && d < 15*ms {
				t.Fatalf("packet %d delayed %v, under 15ms", a.id, d)
			}
			if i > 0 && a.id < got[i-1].id {
				overtaken++
			}
		}
		if reorder && overtaken == 0 {
			t.Error("5 ms of jitter on packets 0.1 ms apart reordered nothing")
		}
	}
}

func TestTimeRegressionIsClamped(t *testing.T) {
	l := newTestLink(t, LinkConfig{Delay: 10 * ms})
	l.Offer(5*ms, packet(0, 10))
	l.Offer(2*ms, packet(1, 10))
	checkArrivals(t, drain(l), []arrival{{0, 15 * ms}, {1, 15 * ms}})
	if s := l.Stats(); s.TimeRegressions != 1 {
		t.Errorf("time regressions %d, want 1", s.TimeRegressions)
	}
}

// TestCountersBalance offers a random mix to a link that does everything
// and checks that every packet is accounted for exactly once.
func TestCountersBalance(t *testing.T) {
	cfg := LinkConfig{
		RateBps: 20e6, Delay: 30 * ms, Jitter: 3 * ms, Reorder: true, QueuePackets: 20,
		Loss: "ge:0.01,0.3", Outages: []Outage{{Start: 100 * ms, Duration: 20 * ms, Repeat: 500 * ms}},
		Duplicate: 0.02, Corrupt: 0.01, MTU: 1400, ECNThreshold: 10000, Seed: 5,
	}
	l := newTestLink(t, cfg)
	var now time.Duration
	for i := range 20000 {
		now += time.Duration(i%7) * 100 * time.Microsecond
		l.Offer(now, packet(byte(i), 1000+i%500))
		for {
			if _, ok := l.Deliver(now); !ok {
				break
			}
		}
	}
	check := func(s LinkStats) {
		t.Helper()
		if s.Offered+s.Duplicated != s.Delivered+s.Dropped()+s.InFlight {
			t.Errorf("counters do not balance: %+v", s)
		}
	}
	mid := l.Stats()
	check(mid)
	if mid.InFlight == 0 {
		t.Error("nothing in flight mid-run")
	}
	drain(l)
	s := l.Stats()
	check(s)
	for name, v := range map[string]int64{"loss": s.DroppedLoss, "queue": s.DroppedQueue, "outage": s.DroppedOutage,
		"MTU": s.DroppedMTU, "duplicated": s.Duplicated, "corrupted": s.Corrupted, "CE": s.CEMarked} {
		if v == 0 {
			t.Errorf("no %s events in a run built to have them: %+v", name, s)
		}
	}
	if s.InFlight != 0 {
		t.Errorf("in flight %d after draining", s.InFlight)
	}
}

func TestValidateErrors(t *testing.T) {
	for want, cfg := range map[string]LinkConfig{
		"rate -1 bit/s":                     {RateBps: -1},
		"rate +Inf":                         {RateBps: math.Inf(1)},
		"rate step 0: rate -5":              {RateSchedule: []RateStep{{At: 0, RateBps: -5}}},
		"rate step 0: time -1ns":            {RateSchedule: []RateStep{{At: -1}}},
		"rate step 1 at 1s comes before":    {RateSchedule: []RateStep{{At: 2 * time.Second}, {At: time.Second}}},
		"delay -1ns and jitter 0s":          {Delay: -1},
		"outage 0":                          {Outages: []Outage{{Start: 0, Duration: 0}}},
		"delay step 0":                      {DelaySteps: []DelayStep{{At: -ms}}},
		"duplicate probability 2 not in":    {Duplicate: 2},
		"corrupt probability -0.5 not in":   {Corrupt: -0.5},
		"queue bytes -1 is negative":        {QueueBytes: -1},
		"queue packets -2 is negative":      {QueuePackets: -2},
		"MTU -3 is negative":                {MTU: -3},
		"loss probability 1.5 not in [0,1]": {Loss: "uniform:1.5"},
	} {
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(%+v) = %v, want error containing %q", cfg, err, want)
		}
		if _, err := NewLink(cfg); err == nil {
			t.Errorf("NewLink accepted %+v", cfg)
		}
	}
}

func TestConfigIsCopied(t *testing.T) {
	steps := []DelayStep{{At: 0, Delay: 5 * ms}}
	l := newTestLink(t, LinkConfig{DelaySteps: steps})
	steps[0].Delay = time.Second
	l.Offer(0, packet(0, 1))
	checkArrivals(t, drain(l), []arrival{{0, 5 * ms}})
}

func TestHistogramBuckets(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 129, 1000, 1 << 20, 1<<40 + 12345, 1<<62 + 1} {
		i := histBucket(v)
		mid := uint64(histValue(i))
		if v < 128 && mid != v {
			t.Errorf("value %d: bucket value %d, want exact", v, mid)
		}
		if diff := float64(mid) - float64(v); diff < -float64(v)/64 || diff > float64(v)/64 {
			t.Errorf("value %d: bucket %d value %d, more than 1/64 away", v, i, mid)
		}
		if i >= len(histogram{}.counts) {
			t.Errorf("value %d: bucket %d out of range", v, i)
		}
	}
}

// TestSteadyStateDoesNotAllocate runs a loaded link long enough to size its
// rings, then checks that offering and delivering allocate nothing.
func TestSteadyStateDoesNotAllocate(t *testing.T) {
	for _, reorder := range []bool{false, true} {
		l := newTestLink(t, LinkConfig{RateBps: 300e6, Delay: 20 * ms, Jitter: time.Millisecond, Reorder: reorder,
			Loss: "ge:0.001,0.3", Outages: []Outage{{Start: time.Second, Duration: ms, Repeat: time.Second}},
			DelaySteps: []DelayStep{{At: 0, Delay: 25 * ms, Every: 15 * time.Second}}})
		pkt := make([]byte, 1400)
		var now time.Duration
		step := func() {
			now += 37 * time.Microsecond
			l.Offer(now, pkt)
			for {
				if _, ok := l.Deliver(now); !ok {
					break
				}
			}
		}
		for range 5000 {
			step()
		}
		if allocs := testing.AllocsPerRun(2000, step); allocs != 0 {
			t.Errorf("reorder=%v: %v allocations per packet", reorder, allocs)
		}
	}
}

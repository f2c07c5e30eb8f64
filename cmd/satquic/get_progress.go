package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// getProgress counts what the downloads of one connection received, and
// what they will receive in all when every response announced its
// length (HTTP/3 with a content-length; hq-interop never does).
type getProgress struct {
	files    int64
	received atomic.Int64
	expected atomic.Int64 // the lengths announced so far, summed
	known    atomic.Int64 // the responses that announced a length
}

// announce records a response's length.
func (p *getProgress) announce(n int64) {
	p.expected.Add(n)
	p.known.Add(1)
}

func (p *getProgress) add(n int64) { p.received.Add(n) }

// progressTick is how often the progress line is redrawn.
const progressTick = 250 * time.Millisecond

// rateWindow is how far back the rate on the progress line looks: long
// enough to smooth the bursts of a paced sender, short enough to follow a
// slow start on a long round trip.
const rateWindow = 2 * time.Second

// start draws the progress on one line of w, if w is a terminal, until
// the returned function is called, which clears the line.
func (p *getProgress) start(w io.Writer) func() {
	f, ok := w.(*os.File)
	if !ok {
		return func() {}
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(progressTick)
		defer tick.Stop()
		var rate rateMeter
		rate.sample(time.Now(), 0)
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case now := <-tick.C:
				n := p.received.Load()
				rate.sample(now, n)
				line := renderProgress(n, p.expected.Load(), p.known.Load() == p.files, rate.bytesPerSecond())
				fmt.Fprint(w, "\r\033[K"+line)
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// rateMeter measures a rate over the last rateWindow.
type rateMeter struct {
	samples []rateSample
}

type rateSample struct {
	at    time.Time
	bytes int64
}

func (m *rateMeter) sample(at time.Time, bytes int64) {
	m.samples = append(m.samples, rateSample{at, bytes})
	// Keep one sample at or beyond the window's start.
	for len(m.samples) > 2 && at.Sub(m.samples[1].at) >= rateWindow {
		m.samples = m.samples[1:]
	}
}

func (m *rateMeter) bytesPerSecond() float64 {
	if len(m.samples) < 2 {
		return 0
	}
	first, last := m.samples[0], m.samples[len(m.samples)-1]
	d := last.at.Sub(first.at).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(last.bytes-first.bytes) / d
}

// progressBarWidth is the number of cells of the bar.
const progressBarWidth = 24

// renderProgress is the progress line: a bar, the share done and the time
// left when the total is known, and always the bytes and the rate.
func renderProgress(received, expected int64, totalKnown bool, bytesPerSecond float64) string {
	rate := fmt.Sprintf("%.1f Mbit/s", bytesPerSecond*8/1e6)
	if !totalKnown || expected <= 0 {
		return humanBytes(received) + "  " + rate
	}
	frac := min(float64(received)/float64(expected), 1)
	full := int(frac * progressBarWidth)
	bar := strings.Repeat("=", full)
	if full < progressBarWidth {
		bar += ">" + strings.Repeat(" ", progressBarWidth-full-1)
	}
	return fmt.Sprintf("[%s] %3.0f%%  %s of %s  %s  ETA %s", bar, frac*100, humanBytes(received), humanBytes(expected), rate, eta(expected-received, bytesPerSecond))
}

// eta formats the time the remaining bytes take at the rate.
func eta(remaining int64, bytesPerSecond float64) string {
	if remaining <= 0 {
		return "0s"
	}
	if bytesPerSecond <= 0 {
		return "--"
	}
	secs := float64(remaining) / bytesPerSecond
	if secs > 100*3600 {
		return "--"
	}
	d := time.Duration(secs * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds())+1)
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

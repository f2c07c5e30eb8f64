package main

import (
	"bytes"
	"regexp"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a stderr that a test can read while the command writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls the buffer until re matches, and returns the submatches.
func (b *lockedBuffer) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	return b.waitWithin(t, re, 5*time.Second)
}

// waitWithin is waitFor with a deadline of d.
func (b *lockedBuffer) waitWithin(t *testing.T, re *regexp.Regexp, d time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(b.String()); m != nil {
			return m
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %q in the output:\n%s", re, b.String())
	return nil
}

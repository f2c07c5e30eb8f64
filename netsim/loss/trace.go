package loss

import (
	"errors"
	"fmt"
	"unicode"
)

// Trace replays a recorded loss pattern in a loop.
type Trace struct {
	pattern []bool
	pos     int
	drops   int
	name    string // file the pattern came from, for String
}

// NewTrace builds a trace from a string of '0' (delivered) and '1' (lost)
// characters; whitespace is ignored, anything else is an error.
func NewTrace(pattern string) (*Trace, error) {
	t := &Trace{}
	for i, r := range pattern {
		switch {
		case r == '0' || r == '1':
			t.pattern = append(t.pattern, r == '1')
			if r == '1' {
				t.drops++
			}
		case unicode.IsSpace(r):
		default:
			return nil, fmt.Errorf("character %q at byte %d is not 0, 1 or space", r, i)
		}
	}
	if len(t.pattern) == 0 {
		return nil, errors.New("trace holds no 0 or 1")
	}
	return t, nil
}

// Drop returns the pattern's next entry, wrapping at its end.
func (t *Trace) Drop() bool {
	d := t.pattern[t.pos]
	t.pos++
	if t.pos == len(t.pattern) {
		t.pos = 0
	}
	return d
}

// Mean is the share of 1s in the pattern.
func (t *Trace) Mean() float64 { return float64(t.drops) / float64(len(t.pattern)) }

// String is "trace:FILE" for a trace read from a file, else
// "pattern:BITS".
func (t *Trace) String() string {
	if t.name != "" {
		return "trace:" + t.name
	}
	b := make([]byte, len(t.pattern))
	for i, d := range t.pattern {
		b[i] = '0'
		if d {
			b[i] = '1'
		}
	}
	return "pattern:" + string(b)
}

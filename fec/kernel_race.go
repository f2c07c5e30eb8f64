//go:build race

package fec

import (
	"runtime"
	"unsafe"
)

// Assembly is invisible to the race detector; the SIMD wrappers report
// the bytes their kernels read and write so that races in callers still
// show up under -race.

// raceEnabled lets the exhaustive tests shrink under the slower -race build.
const raceEnabled = true

func raceReadBytes(b []byte) {
	if len(b) > 0 {
		runtime.RaceReadRange(unsafe.Pointer(unsafe.SliceData(b)), len(b))
	}
}

func raceWriteBytes(b []byte) {
	if len(b) > 0 {
		runtime.RaceWriteRange(unsafe.Pointer(unsafe.SliceData(b)), len(b))
	}
}

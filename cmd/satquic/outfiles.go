package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
)

// plotToFile tells a --plot file (FILE.png) from a directory.
func plotToFile(p string) bool { return strings.EqualFold(filepath.Ext(p), ".png") }

// writeOutput creates path and writes it with fn; an empty path writes
// nothing. A failed write names the file.
func writeOutput(path string, fn func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// startCPUProfile writes a CPU profile to path (--cpuprofile) until the
// returned function is called; an empty path profiles nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%w: --cpuprofile: %v", errUsage, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// startMemProfile writes the allocation profile (pprof's "allocs":
// alloc_space and alloc_objects since the program started, inuse_space
// at the end) to path (--memprofile) when the returned function is
// called; an empty path writes nothing. The file is created at once, so
// that a path that cannot be written fails before the work.
func startMemProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%w: --memprofile: %v", errUsage, err)
	}
	return func() {
		_ = pprof.Lookup("allocs").WriteTo(f, 0)
		f.Close()
	}, nil
}

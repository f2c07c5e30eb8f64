package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/satquic/satquic/bench/bulkproto"
)

// The bulk protocol of "satquic bench bulk", spoken by quic-go: the
// package bench/bulkproto, which satquic's side speaks too.

const (
	bulkALPN    = bulkproto.ALPN
	maxBulkSize = bulkproto.MaxSize
)

// bulkIdleTimeout matches satquic's side: idle connections outlive the
// opening of the last one on a busy machine.
const bulkIdleTimeout = 5 * time.Minute

type (
	memReport = bulkproto.MemReport
	jsonLines = bulkproto.JSONLines
)

var (
	writeBulkRequest = bulkproto.WriteRequest
	parseBulkRequest = bulkproto.ParseRequest
	writeBulk        = bulkproto.Write
	readBulk         = bulkproto.Read
	serveMemRequests = bulkproto.ServeMemRequests
)

// untilStdinEnds is a context that ends with SIGINT, SIGTERM or the end of
// standard input, the bulk children's lifeline.
func untilStdinEnds(stdin io.Reader) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		stop()
	}()
	return ctx, stop
}

// startProfile writes a CPU profile to path until the returned function
// is called; an empty path writes none.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
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

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"
)

// debugState is what /debug/vars reports: enough to watch a long-running
// server for leaks (goroutines, heap) and for what its limits refuse.
type debugState struct {
	Goroutines     int      `json:"goroutines"`
	HeapAllocBytes uint64   `json:"heap_alloc_bytes"`
	HeapSysBytes   uint64   `json:"heap_sys_bytes"`
	Connections    [2]int64 `json:"connections_h3_hq"`
	Requests       [2]int64 `json:"requests_h3_hq"`
	H3             any      `json:"h3"`
	// Sockets has a server's sockets, with more than one.
	Sockets []debugSocket `json:"sockets,omitempty"`
}

// debugSocket is what one socket of the server received.
type debugSocket struct {
	Connections uint64 `json:"connections"`
	Datagrams   uint64 `json:"datagrams"`
	// Foreign are datagrams for another socket's connections, which
	// steering keeps at 0.
	Foreign uint64 `json:"foreign_datagrams"`
}

// startDebug serves Go's runtime profiles (net/http/pprof under
// /debug/pprof/) and a JSON snapshot of the server (/debug/vars) on addr,
// over plain HTTP: bind it to a loopback or management address only. It
// prints where it listens on stdout and returns a function that stops it.
func startDebug(addr string, s *fileServer, stdout io.Writer) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: --debug-addr: %v", errUsage, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/vars", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.debugState())
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	fmt.Fprintf(stdout, "debug endpoints on http://%s/debug/pprof/ and /debug/vars\n", ln.Addr())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stdout, "debug endpoints stopped: %v\n", err)
		}
	}()
	return func() {
		_ = srv.Close()
		<-done
	}, nil
}

// debugState takes a snapshot of the process and the server.
func (s *fileServer) debugState() debugState {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := debugState{
		Goroutines:     runtime.NumGoroutine(),
		HeapAllocBytes: ms.HeapAlloc,
		HeapSysBytes:   ms.HeapSys,
		Connections:    [2]int64{s.conns[protoH3].Load(), s.conns[protoHQ].Load()},
		Requests:       [2]int64{s.requests[protoH3].Load(), s.requests[protoHQ].Load()},
		H3:             s.h3.Stats(),
	}
	if s.sockets == nil {
		return st
	}
	if stats := s.sockets(); len(stats) > 1 {
		for _, x := range stats {
			st.Sockets = append(st.Sockets, debugSocket{Connections: x.Connections, Datagrams: x.Datagrams, Foreign: x.Foreign})
		}
	}
	return st
}

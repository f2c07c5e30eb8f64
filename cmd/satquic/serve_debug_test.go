package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"testing"
)

// TestServeDebugEndpoints checks that --debug-addr serves the counters as
// JSON and the goroutine profile, and that a bad address is a usage error.
func TestServeDebugEndpoints(t *testing.T) {
	h := startServeHandle(t, t.TempDir(), "--debug-addr", "127.0.0.1:0")
	m := h.stdout.waitFor(t, regexp.MustCompile(`debug endpoints on http://(127\.0\.0\.1:\d+)/`))
	base := "http://" + m[1]

	resp, err := http.Get(base + "/debug/vars")
	if err != nil {
		t.Fatal(err)
	}
	var st debugState
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("/debug/vars: %v", err)
	}
	if st.Goroutines <= 0 || st.HeapAllocBytes == 0 {
		t.Errorf("/debug/vars reports %d goroutines and %d heap bytes", st.Goroutines, st.HeapAllocBytes)
	}

	resp, err = http.Get(base + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("goroutine profile: %s", resp.Status)
	}
}

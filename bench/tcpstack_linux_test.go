package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func requireCongestionControl(t *testing.T, cc string) {
	t.Helper()
	avail, err := availableCongestionControls()
	if err != nil {
		t.Skipf("cannot read the kernel's congestion controls (%v); skipping", err)
	}
	if !hasWord(avail, cc) {
		if os.Geteuid() != 0 {
			t.Skipf("the kernel offers no %s (available: %s) and loading it needs root; skipping", cc, avail)
		}
		if err := EnsureTCPCongestionControl(cc); err != nil {
			t.Skipf("%v; skipping", err)
		}
	}
}

func TestTCPStacksOverLoopback(t *testing.T) {
	for _, name := range []string{"tcp-cubic", "tcp-bbr"} {
		t.Run(name, func(t *testing.T) {
			st, err := LookupStack(name)
			if err != nil {
				t.Fatal(err)
			}
			cc := strings.TrimPrefix(name, "tcp-")
			requireCongestionControl(t, cc)
			if err := st.Check(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			ep, err := st.Start(ctx, loopbackEnv())
			if err != nil {
				t.Fatal(err)
			}
			defer ep.Close()
			// Two downloads: each on a connection of its own.
			for _, size := range []int64{1, 3<<20 + 17} {
				d, err := ep.Download(ctx, size)
				if err != nil {
					t.Fatal(err)
				}
				if d.Bytes != size || d.Elapsed <= 0 || d.Detail != "cc="+cc {
					t.Errorf("download of %d bytes: %+v", size, d)
				}
			}
			if err := ep.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if _, err := ep.Download(ctx, 10); err == nil {
				t.Error("download from a closed server succeeded")
			}
		})
	}
}

func TestCongestionControlEnforced(t *testing.T) {
	if err := EnsureTCPCongestionControl("no-such-cc"); err == nil || !strings.Contains(err.Error(), `no "no-such-cc" congestion control`) {
		t.Errorf("EnsureTCPCongestionControl(no-such-cc) = %v", err)
	}
	requireCongestionControl(t, "cubic")
	// A listener whose sockets do not use the stack's congestion control
	// makes the download fail, naming the mismatch.
	st := &tcpStack{name: "tcp-cubic", cc: "cubic"}
	ep, err := st.Start(context.Background(), loopbackEnv())
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	ccl := ep.(*tcpEndpoints).ccl
	ccl.mu.Lock()
	ccl.want = "reno"
	ccl.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := ep.Download(ctx, 1000); err == nil || !strings.Contains(err.Error(), `"cubic", want "reno"`) {
		t.Errorf("download with the wrong congestion control: %v", err)
	}
}

func TestFetchBytesChecksLength(t *testing.T) {
	srv := httptest.NewServer(BytesHandler())
	defer srv.Close()
	get := func(query string, size int64) (int64, error) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+BytesPath+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		return FetchBytes(srv.Client(), req, size)
	}
	if n, err := get("?n=100000", 100000); err != nil || n != 100000 {
		t.Errorf("100000 bytes: %d, %v", n, err)
	}
	if _, err := get("?n=999", 1000); err == nil {
		t.Error("a short body passed")
	}
	if _, err := get("?n=1001", 1000); err == nil {
		t.Error("a long body passed")
	}
	if _, err := get("?n=x", 1); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("bad size: %v", err)
	}
}

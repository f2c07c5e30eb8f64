package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
)

func TestSatquicStackOverLoopback(t *testing.T) {
	st, err := LookupStack("satquic")
	if err != nil {
		t.Fatal(err)
	}
	if st.HandshakeRTTs() != 1 {
		t.Errorf("HandshakeRTTs = %d, want 1", st.HandshakeRTTs())
	}
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
	// Each download is a connection of its own; the empty body and a size
	// that is no multiple of the generated block check the length.
	for _, size := range []int64{0, 1, 3<<20 + 17} {
		d, err := ep.Download(ctx, size)
		if err != nil {
			t.Fatalf("download of %d bytes: %v", size, err)
		}
		if d.Bytes != size || d.Elapsed <= 0 || !strings.HasPrefix(d.Detail, "cc=bbr ") {
			t.Errorf("download of %d bytes: %+v", size, d)
		}
	}
	if err := ep.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	dctx, dcancel := context.WithTimeout(ctx, 2*time.Second)
	defer dcancel()
	if _, err := ep.Download(dctx, 10); err == nil {
		t.Error("download from a closed server succeeded")
	}
}

// TestSatquicStackRejectsBadRequests: a path that names no size is reset
// rather than answered with some default body.
func TestSatquicStackRejectsBadRequests(t *testing.T) {
	st := &satquicStack{name: "satquic"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ep, err := st.Start(ctx, loopbackEnv())
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	e := ep.(*satquicEndpoints)
	c, err := quic.DialAddr(ctx, e.addr.String(), e.cert.ClientTLSConfig(hq.ALPN), st.config())
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	for _, p := range []string{"/abc", "/-1", "/index.html"} {
		var sink strings.Builder
		if n, err := hq.Get(ctx, c, p, &sink, nil); err == nil {
			t.Errorf("GET %s: %d bytes, want an error", p, n)
		}
	}
}

func TestParseSatquicPath(t *testing.T) {
	for p, want := range map[string]int64{"/0": 0, "/1048576": 1 << 20} {
		if got, err := parseSatquicPath(p); err != nil || got != want {
			t.Errorf("parseSatquicPath(%q) = %d, %v; want %d", p, got, err, want)
		}
		if got := satquicPath(want); got != p {
			t.Errorf("satquicPath(%d) = %q, want %q", want, got, p)
		}
	}
	for _, p := range []string{"", "/", "7", "/x", "/-5", "/99999999999999999999"} {
		if _, err := parseSatquicPath(p); err == nil {
			t.Errorf("parseSatquicPath(%q) accepted", p)
		}
	}
}

// TestSatquicZeroRTTStackOverLoopback: the 0-RTT stacks' timed
// connection resumes the session of its untimed first one and its request
// goes in 0-RTT, accepted by the early server; satquic-resume's client
// reports the BDP frames it returned and received (none over loopback,
// whose round trip is too short for a state worth saving).
func TestSatquicZeroRTTStackOverLoopback(t *testing.T) {
	for _, name := range []string{"satquic-0rtt", "satquic-resume"} {
		st, err := LookupStack(name)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		ep, err := st.Start(ctx, loopbackEnv())
		if err != nil {
			t.Fatal(err)
		}
		defer ep.Close()
		for _, size := range []int64{1, 1 << 20} {
			d, err := ep.Download(ctx, size)
			if err != nil {
				t.Fatalf("%s: download of %d bytes: %v", name, size, err)
			}
			if d.Bytes != size || !strings.Contains(d.Detail, "resumed=true 0rtt=true") ||
				strings.Contains(d.Detail, "bdp_returned=") != (name == "satquic-resume") {
				t.Errorf("%s: download of %d bytes: %+v", name, size, d)
			}
		}
	}
}

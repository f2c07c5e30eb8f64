package main

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/quic"
)

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "65536": 65536, "64KiB": 64 << 10, "1MiB": 1 << 20, "2GiB": 2 << 30,
		"1k": 1000, "1M": 1e6, "3G": 3e9, "100B": 100, " 8 MiB ": 8 << 20,
	} {
		if got, err := parseByteSize(in); err != nil || got != want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5M", "MiB", "1TiB", "9999999999GiB"} {
		if got, err := parseByteSize(in); err == nil {
			t.Errorf("parseByteSize(%q) = %d, want an error", in, got)
		}
	}
	b := byteSize(64 << 20)
	if b.String() != "64MiB" {
		t.Errorf("String() = %q", b.String())
	}
}

// TestServeLimitFlags: the flags reach http3.Server's fields; their 0
// is no limit, which the Server spells negative.
func TestServeLimitFlags(t *testing.T) {
	parse := func(args ...string) (*http3.Server, error) {
		var o limitOptions
		fs := newFlagSet("serve", "", io.Discard)
		o.register(fs)
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		if err := o.check(); err != nil {
			return nil, err
		}
		s := &http3.Server{}
		o.apply(s)
		return s, nil
	}
	s, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	if s.ReadHeaderTimeout != 10*time.Second || s.IdleStreamTimeout != time.Minute || s.ResponseStallTimeout != 5*time.Minute ||
		s.MaxHeaderBytes != 1<<20 || s.MaxConnHeaderBytes != 0 || s.MaxRequestMemory != 64<<20 {
		t.Errorf("defaults: %+v", s)
	}
	s, err = parse("--header-timeout", "0", "--idle-stream-timeout", "0", "--response-stall-timeout", "0",
		"--max-header-bytes", "16KiB", "--max-conn-header-bytes", "256KiB", "--request-memory", "0")
	if err != nil {
		t.Fatal(err)
	}
	if s.ReadHeaderTimeout >= 0 || s.IdleStreamTimeout >= 0 || s.ResponseStallTimeout >= 0 ||
		s.MaxHeaderBytes != 16<<10 || s.MaxConnHeaderBytes != 256<<10 || s.MaxRequestMemory >= 0 {
		t.Errorf("set: %+v", s)
	}
	for _, bad := range [][]string{
		{"--header-timeout", "-1s"}, {"--max-header-bytes", "0"}, {"--request-memory", "lots"},
	} {
		if _, err := parse(bad...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestServeHeaderTimeout: a client that opens a request stream and sends
// one byte of it is reset with H3_REQUEST_INCOMPLETE at --header-timeout,
// and serve counts it when it stops.
func TestServeHeaderTimeout(t *testing.T) {
	checkNoGoroutines(t)
	dir, _ := serveFiles(t, 10)
	h := startServeHandle(t, dir, "--header-timeout", "300ms")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := quic.DialAddr(ctx, h.addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{http3.NextProtoH3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	st, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := st.Write([]byte{0x01}); err != nil {
		t.Fatal(err)
	}
	_ = st.SetReadDeadline(time.Now().Add(8 * time.Second))
	_, err = st.Read(make([]byte, 1))
	var se *quic.StreamError
	if !errors.As(err, &se) || http3.ErrCode(se.ErrorCode) != http3.ErrCodeRequestIncomplete {
		t.Fatalf("read %v, want a reset with H3_REQUEST_INCOMPLETE", err)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("reset after %v, before the timeout", d)
	}
	if err := h.stop(t); err != nil {
		t.Fatal(err)
	}
	if out := h.stdout.String(); !strings.Contains(out, "1 header timeouts") {
		t.Errorf("serve's report:\n%s", out)
	}
}

package hq

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/netsim/memnet"
	"github.com/satquic/satquic/quic"
)

// lateFIN is a request stream whose Close waits, as a client descheduled
// between its write and its FIN would, and records what Close returned.
type lateFIN struct {
	*quic.Stream
	wait     time.Duration
	closeErr error
}

func (s *lateFIN) Close() error {
	time.Sleep(s.wait)
	s.closeErr = s.Stream.Close()
	return s.closeErr
}

// TestGetFINAfterStopSending: the server stops reading a request once it
// has the request line (STOP_SENDING), which can reach the client before
// the client sent its FIN. The request is complete, so the download must
// go on: it once failed with "write on closed stream".
func TestGetFINAfterStopSending(t *testing.T) {
	root := t.TempDir()
	content := bytes.Repeat([]byte("orbit "), 50_000)
	must(t, os.WriteFile(filepath.Join(root, "f"), content, 0o644))
	r, err := os.OpenRoot(root)
	must(t, err)
	defer r.Close()

	synctest.Test(t, func(t *testing.T) {
		n := memnet.New(memnet.Config{Seed: 2})
		defer n.Close()
		ca, sa := netip.MustParseAddrPort("10.0.0.1:1000"), netip.MustParseAddrPort("10.0.0.2:443")
		link := netsim.LinkConfig{RateBps: 50e6, Delay: 10 * time.Millisecond}
		_, err := n.AddPath(ca.Addr(), sa.Addr(), link, link)
		must(t, err)
		spc, _ := n.Listen(sa)
		cpc, _ := n.Listen(ca)
		cert, err := SelfSigned([]string{"10.0.0.2"}, time.Now())
		must(t, err)
		l, err := quic.Listen(spc, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{ALPN}}, nil)
		must(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- (&Server{Root: r}).Serve(ctx, l) }()
		ctls := &tls.Config{NextProtos: []string{ALPN}, InsecureSkipVerify: true, VerifyPeerCertificate: VerifyPin(Fingerprint(cert.Certificate[0]))}
		c, err := quic.Dial(ctx, cpc, net.UDPAddrFromAddrPort(sa), ctls, nil)
		must(t, err)

		for _, wait := range []time.Duration{0, 200 * time.Millisecond} {
			st, err := c.OpenStreamSync(ctx)
			must(t, err)
			// 200 ms is ten round trips: the STOP_SENDING is in
			// before the FIN.
			late := &lateFIN{Stream: st, wait: wait}
			var got bytes.Buffer
			k, err := get(ctx, late, "/f", &got, nil)
			if err != nil || k != int64(len(content)) || !bytes.Equal(got.Bytes(), content) {
				t.Errorf("FIN %v after the request: %d bytes, %v", wait, k, err)
			}
			if stopped := late.closeErr != nil; stopped != (wait > 0) {
				t.Errorf("FIN %v after the request: Close returned %v; the test did not order STOP_SENDING as meant", wait, late.closeErr)
			}
		}
		_ = c.CloseWithError(0, "")
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		_ = l.Close()
	})
}

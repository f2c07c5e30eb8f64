package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/quic"
)

// h3Fetcher downloads with HTTP/3: an http.Client over an http3.Transport
// that sends every request on the one connection get dialed, so that the
// report's statistics are the transfer's.
type h3Fetcher struct {
	tr     *http3.Transport
	client *http.Client
}

// errConnectionGone: the Transport wanted a second connection (after a
// GOAWAY or the end of the first), which get does not open.
var errConnectionGone = errors.New("the server ended the connection (or sent GOAWAY) before the downloads were done")

func newH3Fetcher(c *quic.Conn, server string) *h3Fetcher {
	var handed atomic.Bool
	tr := &http3.Transport{
		// The file as stored, and its content-length for the progress line.
		DisableCompression: true,
		Dial: func(_ context.Context, addr string, _ *tls.Config, _ *quic.Config) (*quic.Conn, error) {
			if addr != server {
				return nil, fmt.Errorf("no connection to %s", addr)
			}
			if handed.Swap(true) {
				return nil, errConnectionGone
			}
			return c, nil
		},
	}
	client := &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			if req.URL.Scheme != "https" || hostPort(req.URL) != server {
				return fmt.Errorf("redirected to %s, another server", req.URL.Redacted())
			}
			return nil
		},
	}
	return &h3Fetcher{tr: tr, client: client}
}

// maxRedirects is how many redirects a download follows, as net/http's
// default client.
const maxRedirects = 10

// hostPort is the server a URL names, with the port 443 by default.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// statusError is a response other than 200 OK.
type statusError struct{ status string }

func (e *statusError) Error() string { return "HTTP status " + e.status }

func (h *h3Fetcher) fetch(ctx context.Context, f *getFile, w io.Writer, p *getProgress) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.URL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		// The URL is in the report already.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, err
	}
	defer resp.Body.Close()
	f.Status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		return 0, &statusError{resp.Status}
	}
	if resp.ContentLength >= 0 {
		p.announce(resp.ContentLength)
	}
	n, err := copyCounting(w, resp.Body, p)
	if err == nil && resp.ContentLength >= 0 && n != resp.ContentLength {
		err = fmt.Errorf("response ended after %d of its %d bytes", n, resp.ContentLength)
	}
	return n, err
}

func (h *h3Fetcher) close() { _ = h.tr.Close() }

// copyBufferSize is the size of the reads from a response body.
const copyBufferSize = 256 << 10

// copyCounting copies r to w, counting the bytes in p as they arrive.
func copyCounting(w io.Writer, r io.Reader, p *getProgress) (int64, error) {
	buf := make([]byte, copyBufferSize)
	var n int64
	for {
		k, rerr := r.Read(buf)
		if k > 0 {
			if _, err := w.Write(buf[:k]); err != nil {
				return n, err
			}
			n += int64(k)
			p.add(int64(k))
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

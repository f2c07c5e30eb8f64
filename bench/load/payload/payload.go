// Package payload is the HTTP handler that load experiments measure
// servers with: GET /bytes/N answers N bytes. It depends on net/http only,
// so that every HTTP/3 server under test (satquic's, and quic-go's in a
// program of its own) runs exactly the same handler code and the
// comparison measures the stacks, not the handlers.
package payload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
)

// Prefix is the path under which sizes are served: Prefix + "1024" is
// 1024 bytes.
const Prefix = "/bytes/"

// MaxSize bounds a response, so that a typo fails at once rather than
// streaming for hours.
const MaxSize = 1 << 40

// block is the body's repeating unit, random so that nothing along the
// path could compress it, and shared read-only by every response so that
// serving costs no allocation.
var block = func() []byte {
	b := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(0x10ad, 0x5eed))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}()

// errPath: the path is not Prefix followed by a size.
var errPath = errors.New("payload: want " + Prefix + "N, N a size in bytes")

// ParsePath reads the size from a path like "/bytes/1024", or from
// "/bytes?n=1024" (the form of the download experiments' byte servers)
// when query holds n. Sizes are decimal digits only, up to MaxSize.
func ParsePath(path, query string) (int64, error) {
	var digits string
	switch {
	case strings.HasPrefix(path, Prefix):
		digits = path[len(Prefix):]
	case path == strings.TrimSuffix(Prefix, "/") && strings.HasPrefix(query, "n="):
		digits = query[len("n="):]
	default:
		return 0, errPath
	}
	if digits == "" || len(digits) > 13 {
		return 0, errPath
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, errPath
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > MaxSize {
		return 0, fmt.Errorf("payload: size %s: want at most %d bytes", digits, int64(MaxSize))
	}
	return n, nil
}

// Handler serves GET (and HEAD) Prefix+N with N bytes, a Content-Length
// and an explicit Content-Type, so that no server sniffs the body. Other
// paths get 404 and other methods 405.
func Handler() http.Handler {
	return http.HandlerFunc(serve)
}

func serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	n, err := ParsePath(r.URL.Path, r.URL.RawQuery)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	h := w.Header()
	h["Content-Type"] = contentType
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	for n > 0 {
		k := min(n, int64(len(block)))
		if _, err := w.Write(block[:k]); err != nil {
			return
		}
		n -= k
	}
}

// contentType is shared by every response: header maps hold slices, and
// one that nobody modifies costs no allocation per request.
var contentType = []string{"application/octet-stream"}

// Body returns the body Handler sends for Prefix+n, for clients that
// check what they receive byte for byte.
func Body(n int) []byte {
	b := make([]byte, n)
	for off := 0; off < n; off += len(block) {
		copy(b[off:], block)
	}
	return b
}

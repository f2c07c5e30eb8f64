package main

import (
	"math/rand/v2"
	"net/http"
	"strconv"
)

// bytesPath is the path the download server answers; the query parameter
// n is the size. It matches the HTTPS byte server of the bench package, so
// that every stack is asked the same question.
const bytesPath = "/bytes"

// maxBytes bounds a response, so that a typo fails at once rather than
// streaming for hours.
const maxBytes = 1 << 40

// block is the body's repeating unit. Its bytes are random so that
// nothing along the path could compress them.
var block = func() []byte {
	b := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(0x5a7c, 0x0b17))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}()

// bytesHandler serves GET /bytes?n=N with N bytes and a Content-Length.
func bytesHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+bytesPath, func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.ParseInt(r.URL.Query().Get("n"), 10, 64)
		if err != nil || n < 0 || n > maxBytes {
			http.Error(w, "want ?n=BYTES", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		w.WriteHeader(http.StatusOK)
		for n > 0 {
			k := min(n, int64(len(block)))
			if _, err := w.Write(block[:k]); err != nil {
				return
			}
			n -= k
		}
	})
	return mux
}

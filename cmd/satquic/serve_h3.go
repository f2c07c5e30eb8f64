package main

import (
	"io/fs"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// fileHandler serves the files under root over HTTP/3 with
// http.FileServer: Range, conditional requests, directory listings and
// index.html come with it. It counts requests and, with logf, logs each.
func fileHandler(root *os.Root, requests *atomic.Int64, logf func(format string, args ...any)) http.Handler {
	files := http.FileServerFS(confinedFS{root})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if logf == nil {
			files.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rec := &recordingWriter{ResponseWriter: w}
		files.ServeHTTP(rec, r)
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		logf("%s h3 %s %s: %d, %d bytes in %v", r.RemoteAddr, r.Method, r.URL.RequestURI(), status, rec.written, time.Since(start).Round(time.Microsecond))
	})
}

// confinedFS is the served directory as http.FileServer sees it. The
// os.Root keeps every path inside the directory, through ".." or
// symbolic links. Only regular files and directories are opened: opening
// a FIFO would block until a writer came. Every failure reads as "not
// found", as over hq-interop, so that an answer reveals nothing of what
// lies beyond the served files.
type confinedFS struct{ root *os.Root }

func (c confinedFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	notFound := &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	fi, err := c.root.Stat(name)
	if err != nil || !(fi.Mode().IsRegular() || fi.IsDir()) {
		return nil, notFound
	}
	f, err := c.root.Open(name)
	if err != nil {
		return nil, notFound
	}
	return f, nil
}

// recordingWriter notes the status and the size of a response for the
// access log.
type recordingWriter struct {
	http.ResponseWriter
	status  int
	written int64
}

func (w *recordingWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the HTTP/3 response writer.
func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

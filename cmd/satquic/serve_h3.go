package main

import (
	"io/fs"
	"net/http"
	"os"
	"path"
	"sync/atomic"
	"time"

	"github.com/satquic/satquic/internal/hq"
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
// symbolic links. Only regular files and directories are opened, without
// blocking (hq.OpenServed): a FIFO would otherwise hold the request until
// a writer came. Every failure reads as "not found", as over hq-interop,
// so that an answer reveals nothing of what lies beyond the served files;
// directory listings leave out the entries that would answer so.
type confinedFS struct{ root *os.Root }

func (c confinedFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, fi, err := hq.OpenServed(c.root, name, true)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if fi.IsDir() {
		return &confinedDir{File: f, fs: c, name: name}, nil
	}
	return f, nil
}

// confinedDir is a served directory whose listing holds only what Open
// serves: a symbolic link that leaves the root, or a FIFO, is not listed.
type confinedDir struct {
	*os.File
	fs   confinedFS
	name string
}

// ReadDir filters the directory's entries; for n > 0 it reads on until it
// has one to return or the directory ends, as fs.ReadDirFile requires.
func (d *confinedDir) ReadDir(n int) ([]fs.DirEntry, error) {
	for {
		ents, err := d.File.ReadDir(n)
		kept := ents[:0]
		for _, e := range ents {
			if d.serves(e) {
				kept = append(kept, e)
			}
		}
		if len(kept) > 0 || err != nil || n <= 0 {
			return kept, err
		}
	}
}

// serves reports whether Open would serve the entry: regular files and
// directories, and symbolic links that resolve to one inside the root.
func (d *confinedDir) serves(e fs.DirEntry) bool {
	t := e.Type()
	if t.IsRegular() || t.IsDir() {
		return true
	}
	if t&fs.ModeSymlink == 0 {
		return false
	}
	fi, err := d.fs.root.Stat(path.Join(d.name, e.Name()))
	return err == nil && (fi.Mode().IsRegular() || fi.IsDir())
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

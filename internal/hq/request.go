package hq

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// ALPN is the application protocol of hq-interop.
const ALPN = "hq-interop"

// Stream error codes of this package: hq-interop defines none, so they
// echo the HTTP status of the same meaning.
const (
	CodeBadRequest = 0x190 // 400: not a "GET /path" request
	CodeNotFound   = 0x194 // 404: no such regular file under the root
	CodeInternal   = 0x1f4 // 500: the file could not be read
)

// MaxRequestLen bounds a request line.
const MaxRequestLen = 8 << 10

// ErrBadRequest reports a request that is not "GET /path".
var ErrBadRequest = errors.New("hq: bad request")

// WriteRequest writes the request for path (which must start with "/").
func WriteRequest(w io.Writer, p string) error {
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\r\n") {
		return fmt.Errorf("%w: path %q", ErrBadRequest, p)
	}
	_, err := io.WriteString(w, "GET "+p+"\r\n")
	return err
}

// ReadRequest reads a request line, up to its CRLF (or LF) or the end of
// the stream, and returns the path it names, cleaned, starting with "/".
func ReadRequest(r io.Reader) (string, error) {
	buf := make([]byte, 0, 256)
	var one [512]byte
	for {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[:i]
			break
		}
		if len(buf) > MaxRequestLen {
			return "", fmt.Errorf("%w: request line longer than %d bytes", ErrBadRequest, MaxRequestLen)
		}
		n, err := r.Read(one[:])
		buf = append(buf, one[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	line := strings.TrimSuffix(string(buf), "\r")
	target, ok := strings.CutPrefix(line, "GET ")
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrBadRequest, truncate(line))
	}
	target = strings.TrimSpace(target)
	if !strings.HasPrefix(target, "/") || strings.ContainsFunc(target, isControl) {
		return "", fmt.Errorf("%w: path %q", ErrBadRequest, truncate(target))
	}
	// ".." is refused outright rather than cleaned away: a client that
	// sends it is probing.
	for _, seg := range strings.Split(target, "/") {
		if seg == ".." {
			return "", fmt.Errorf("%w: path %q leaves the root", ErrBadRequest, truncate(target))
		}
	}
	return path.Clean(target), nil
}

// isControl reports ASCII control characters, which no file path of a
// request may hold (a stray CR or NUL would reach the file system).
func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

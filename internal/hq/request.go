package hq

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
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

// WriteRequest writes the request for target, a path as it stands in a URL:
// starting with "/", percent-encoded where it must be (no spaces or control
// characters), optionally with a query, which servers ignore.
func WriteRequest(w io.Writer, target string) error {
	if !strings.HasPrefix(target, "/") || strings.ContainsFunc(target, isSpaceOrControl) {
		return fmt.Errorf("%w: path %q", ErrBadRequest, truncate(target))
	}
	_, err := io.WriteString(w, "GET "+target+"\r\n")
	return err
}

// EscapePath percent-encodes a file path for WriteRequest, as a URL's path
// is.
func EscapePath(p string) string { return (&url.URL{Path: p}).EscapedPath() }

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
	// The last read may have brought the line's end with the stream's.
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i]
	}
	line := strings.TrimSuffix(string(buf), "\r")
	target, ok := strings.CutPrefix(line, "GET ")
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrBadRequest, truncate(line))
	}
	return parseTarget(target)
}

// parseTarget turns a request's target into the file path it names: one
// token, rooted, its query dropped (a file server has no use for it) and
// percent-decoded, as a URL's path is. A path that holds control
// characters or ".." segments, before or after decoding, is refused rather
// than cleaned away: a client that sends them is probing.
func parseTarget(target string) (string, error) {
	target = strings.TrimRight(target, " ")
	if !strings.HasPrefix(target, "/") || strings.ContainsFunc(target, isSpaceOrControl) {
		return "", fmt.Errorf("%w: target %q is not one rooted path", ErrBadRequest, truncate(target))
	}
	raw, _, _ := strings.Cut(target, "?")
	p, err := url.PathUnescape(raw)
	if err != nil {
		return "", fmt.Errorf("%w: path %q: %v", ErrBadRequest, truncate(raw), err)
	}
	if strings.ContainsFunc(p, isControl) {
		return "", fmt.Errorf("%w: path %q holds control characters", ErrBadRequest, truncate(raw))
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", fmt.Errorf("%w: path %q leaves the root", ErrBadRequest, truncate(raw))
		}
	}
	return path.Clean(p), nil
}

// isControl reports ASCII control characters, which no file path of a
// request may hold (a stray CR or NUL would reach the file system).
func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// isSpaceOrControl reports what a request target may not hold unescaped.
func isSpaceOrControl(r rune) bool { return r == ' ' || isControl(r) }

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

package hq

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/satquic/satquic/quic"
)

// ErrNotFound reports a server's CodeNotFound.
var ErrNotFound = errors.New("hq: not found")

// Get requests path on a new stream of c and copies the response to w.
// progress, if set, is called with the bytes received so far after each
// read. It returns the response's length. A reset from the server becomes
// ErrNotFound (CodeNotFound) or a *quic.StreamError.
func Get(ctx context.Context, c *quic.Conn, path string, w io.Writer, progress func(int64)) (int64, error) {
	st, err := c.OpenStreamSync(ctx)
	if err != nil {
		return 0, err
	}
	return get(ctx, st, path, w, progress)
}

// requestStream is what a request needs of its stream: a *quic.Stream, or
// a test's wrapper around one.
type requestStream interface {
	io.ReadWriteCloser
	CancelRead(quic.StreamErrorCode)
	CancelWrite(quic.StreamErrorCode)
}

// get sends the request for path on st and copies the response to w.
func get(ctx context.Context, st requestStream, path string, w io.Writer, progress func(int64)) (int64, error) {
	stop := context.AfterFunc(ctx, func() { st.CancelRead(CodeInternal); st.CancelWrite(CodeInternal) })
	defer stop()
	if err := WriteRequest(st, path); err != nil {
		st.CancelWrite(CodeBadRequest)
		return 0, err
	}
	// A server stops reading once it has the request line
	// (Server.ServeStream does), and its STOP_SENDING may arrive between
	// the request's write and its FIN: it resets the sending part (RFC
	// 9000 section 3.5), and Close then fails although the request went
	// out whole. The response decides the outcome: a stream or connection
	// that failed otherwise fails the reads below too.
	_ = st.Close()
	buf := make([]byte, copyBuffer)
	var n int64
	for {
		k, rerr := st.Read(buf)
		if k > 0 {
			if _, err := w.Write(buf[:k]); err != nil {
				st.CancelRead(CodeInternal)
				return n, err
			}
			n += int64(k)
			if progress != nil {
				progress(n)
			}
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			if ctx.Err() != nil {
				return n, ctx.Err()
			}
			var se *quic.StreamError
			if errors.As(rerr, &se) && se.Remote && se.ErrorCode == CodeNotFound {
				return n, fmt.Errorf("%w: %s", ErrNotFound, path)
			}
			return n, rerr
		}
	}
}

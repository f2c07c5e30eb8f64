package http3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/quic"
)

// rawDial opens a bare QUIC connection with ALPN h3 to play a client
// that breaks the rules.
func rawDial(t *testing.T, addr string) *quic.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	qc, err := quic.DialAddr(ctx, addr, clientTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = qc.CloseWithError(0, "") })
	return qc
}

// closeCode waits for the peer to close qc and returns its code.
func closeCode(t *testing.T, qc *quic.Conn) ErrCode {
	t.Helper()
	code, err := peerCloseCode(qc)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// peerCloseCode waits for the peer to close qc and returns its code.
func peerCloseCode(qc *quic.Conn) (ErrCode, error) {
	select {
	case <-qc.Context().Done():
	case <-time.After(5 * time.Second):
		return 0, errors.New("the connection stayed open")
	}
	var ae *quic.ApplicationError
	if err := context.Cause(qc.Context()); !errors.As(err, &ae) || !ae.Remote {
		return 0, fmt.Errorf("connection closed by %v", err)
	}
	return ErrCode(ae.ErrorCode), nil
}

// openUni opens a unidirectional stream and writes b on it.
func openUni(t *testing.T, qc *quic.Conn, b []byte, fin bool) *quic.SendStream {
	t.Helper()
	st, err := qc.OpenUniStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write(b); err != nil {
		t.Fatal(err)
	}
	if fin {
		_ = st.Close()
	}
	return st
}

func controlStream(frames ...[]byte) []byte {
	b := appendVarint(nil, streamControl)
	for _, f := range frames {
		b = append(b, f...)
	}
	return b
}

var okSettings = appendSettingsFrame(nil, settings{})

func getRequest() []byte {
	return frameBytes(frameHeaders, encodeFields(":method", "GET", ":scheme", "https", ":authority", "localhost", ":path", "/"))
}

// TestServerProtocolErrors: a client that breaks RFC 9114 gets its
// connection closed with the code the RFC names.
func TestServerProtocolErrors(t *testing.T) {
	testkit.CheckGoroutines(t)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}), func(s *Server) { s.MaxHeaderBytes = 2000 })
	for _, tc := range []struct {
		name string
		run  func(qc *quic.Conn)
		code ErrCode
	}{
		{"missing SETTINGS", func(qc *quic.Conn) {
			openUni(t, qc, controlStream(appendIDFrame(nil, frameGoAway, 0)), false)
		}, ErrCodeMissingSettings},
		{"HEADERS on the control stream", func(qc *quic.Conn) {
			openUni(t, qc, controlStream(okSettings, getRequest()), false)
		}, ErrCodeFrameUnexpected},
		{"DATA on the control stream", func(qc *quic.Conn) {
			openUni(t, qc, controlStream(okSettings, frameBytes(frameData, []byte("x"))), false)
		}, ErrCodeFrameUnexpected},
		{"second SETTINGS", func(qc *quic.Conn) {
			openUni(t, qc, controlStream(okSettings, okSettings), false)
		}, ErrCodeFrameUnexpected},
		{"SETTINGS too large", func(qc *quic.Conn) {
			openUni(t, qc, controlStream(appendFrameHeader(nil, frameSettings, 1<<20)), false)
		}, ErrCodeExcessiveLoad},
		{"GOAWAY payload too long", func(qc *quic.Conn) {
			openUni(t, qc, controlStream(okSettings, frameBytes(frameGoAway, []byte{1, 2, 3})), false)
		}, ErrCodeFrameError},
		{"HTTP/2 setting", func(qc *quic.Conn) {
			openUni(t, qc, controlStream(frameBytes(frameSettings, settingsPayload(4, 65535))), false)
		}, ErrCodeSettingsError},
		{"control stream closed", func(qc *quic.Conn) {
			openUni(t, qc, controlStream(okSettings), true)
		}, ErrCodeClosedCriticalStream},
		{"second control stream", func(qc *quic.Conn) {
			openUni(t, qc, controlStream(okSettings), false)
			time.Sleep(20 * time.Millisecond)
			openUni(t, qc, controlStream(okSettings), false)
		}, ErrCodeStreamCreationError},
		{"push stream from a client", func(qc *quic.Conn) {
			openUni(t, qc, appendVarint(nil, streamPush), false)
		}, ErrCodeStreamCreationError},
		{"CANCEL_PUSH", func(qc *quic.Conn) {
			openUni(t, qc, controlStream(okSettings, appendIDFrame(nil, frameCancelPush, 0)), false)
		}, ErrCodeIDError},
		{"MAX_PUSH_ID decreasing", func(qc *quic.Conn) {
			openUni(t, qc, controlStream(okSettings, appendIDFrame(nil, frameMaxPushID, 5), appendIDFrame(nil, frameMaxPushID, 4)), false)
		}, ErrCodeIDError},
		{"QPACK encoder insert", func(qc *quic.Conn) {
			openUni(t, qc, []byte{streamQPACKEncoder, 0x4a, 'x'}, false)
		}, ErrCodeQPACKEncoderStreamError},
		{"QPACK table capacity", func(qc *quic.Conn) {
			openUni(t, qc, []byte{streamQPACKEncoder, 0x3f, 0xe1, 0x1f}, false)
		}, ErrCodeQPACKEncoderStreamError},
		{"QPACK decoder acknowledgment", func(qc *quic.Conn) {
			openUni(t, qc, []byte{streamQPACKDecoder, 0x80}, false)
		}, ErrCodeQPACKDecoderStreamError},
		{"QPACK encoder stream closed", func(qc *quic.Conn) {
			openUni(t, qc, []byte{streamQPACKEncoder, 0x20}, true)
		}, ErrCodeClosedCriticalStream},
		{"DATA before HEADERS", func(qc *quic.Conn) {
			st, _ := qc.OpenStream()
			_, _ = st.Write(frameBytes(frameData, []byte("body")))
		}, ErrCodeFrameUnexpected},
		{"SETTINGS on a request stream", func(qc *quic.Conn) {
			st, _ := qc.OpenStream()
			_, _ = st.Write(okSettings)
		}, ErrCodeFrameUnexpected},
		{"HTTP/2 frame on a request stream", func(qc *quic.Conn) {
			st, _ := qc.OpenStream()
			_, _ = st.Write(append(getRequest(), frameBytes(0x06, make([]byte, 8))...))
		}, ErrCodeFrameUnexpected},
		{"PUSH_PROMISE from a client", func(qc *quic.Conn) {
			st, _ := qc.OpenStream()
			_, _ = st.Write(frameBytes(framePushPromise, []byte{0, 0, 0}))
		}, ErrCodeFrameUnexpected},
		{"truncated DATA", func(qc *quic.Conn) {
			st, _ := qc.OpenStream()
			b := append(getRequest(), appendFrameHeader(nil, frameData, 100)...)
			_, _ = st.Write(append(b, "short"...))
			_ = st.Close()
		}, ErrCodeFrameError},
		{"dynamic table reference", func(qc *quic.Conn) {
			st, _ := qc.OpenStream()
			_, _ = st.Write(frameBytes(frameHeaders, []byte{0x02, 0x00, 0x80}))
		}, ErrCodeQPACKDecompressionFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			qc := rawDial(t, ts.addr)
			tc.run(qc)
			if got := closeCode(t, qc); got != tc.code {
				t.Fatalf("closed with %s, want %s", got, tc.code)
			}
		})
	}
}

// TestServerStreamErrors: malformed requests reset their stream; the
// connection goes on. Unknown stream and frame types are ignored.
func TestServerStreamErrors(t *testing.T) {
	testkit.CheckGoroutines(t)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "ok")
	}), func(s *Server) { s.MaxHeaderBytes = 2000 })
	qc := rawDial(t, ts.addr)
	// Unknown and reserved stream types, and a control stream with
	// unknown frames and settings, change nothing.
	openUni(t, qc, append(appendVarint(nil, greaseID(2)), "junk"...), false)
	openUni(t, qc, appendVarint(nil, 0x54), true)
	openUni(t, qc, controlStream(frameBytes(frameSettings, settingsPayload(0x21, 1, 0x12345, 2)), frameBytes(0x40, []byte("x"))), false)

	request := func(b []byte, fin bool) (*http.Response, error) {
		st, err := qc.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		_, _ = st.Write(b)
		if fin {
			_ = st.Close()
		}
		cs := &clientStream{cc: &clientConn{conn: &conn{qc: qc}, t: &Transport{}}, st: st, req: &http.Request{Method: "GET"}, stop: func() bool { return true }}
		return cs.readResponse(false)
	}
	wantReset := func(name string, b []byte, code ErrCode) {
		t.Helper()
		_, err := request(b, true)
		var se *quic.StreamError
		if !errors.As(err, &se) || ErrCode(se.ErrorCode) != code {
			t.Errorf("%s: %v, want a reset with %s", name, err, code)
		}
	}
	wantReset("uppercase field name", frameBytes(frameHeaders, encodeFields(":method", "GET", ":scheme", "https", ":authority", "a", ":path", "/", "X-Up", "1")), ErrCodeMessageError)
	wantReset("missing :path", frameBytes(frameHeaders, encodeFields(":method", "GET", ":scheme", "https", ":authority", "a")), ErrCodeMessageError)
	wantReset("body beyond content-length", append(frameBytes(frameHeaders, encodeFields(":method", "POST", ":scheme", "https", ":authority", "a", ":path", "/", "content-length", "2")), frameBytes(frameData, []byte("abc"))...), ErrCodeMessageError)
	wantReset("body short of content-length", append(frameBytes(frameHeaders, encodeFields(":method", "POST", ":scheme", "https", ":authority", "a", ":path", "/", "content-length", "5")), frameBytes(frameData, []byte("abc"))...), ErrCodeMessageError)
	wantReset("no HEADERS", nil, ErrCodeRequestIncomplete)

	resp, err := request(frameBytes(frameHeaders, encodeFields(":method", "GET", ":scheme", "https", ":authority", "a", ":path", "/", "x-big", string(make([]byte, 3000)))), true)
	if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("oversize header: %v %v", resp, err)
	}

	// Unknown frames around the request's frames are skipped.
	var b []byte
	b = append(b, frameBytes(greaseID(5), []byte("x"))...)
	b = append(b, getRequest()...)
	b = append(b, frameBytes(0x30, make([]byte, 100))...)
	b = append(b, frameBytes(frameData, []byte("body"))...)
	resp, err = request(b, true)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("request with unknown frames: %v %v", resp, err)
	}
	got, _ := io.ReadAll(resp.Body)
	if string(got) != "ok" {
		t.Fatalf("body %q", got)
	}
	select {
	case <-qc.Context().Done():
		t.Fatalf("connection closed: %v", context.Cause(qc.Context()))
	default:
	}
}

// rawServer accepts bare QUIC connections with ALPN h3 and hands each to
// serve, to play a server that breaks the rules.
func rawServer(t *testing.T, serve func(qc *quic.Conn)) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := quic.Listen(pc, serverTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			qc, err := l.Accept(context.Background())
			if err != nil {
				return
			}
			go serve(qc)
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		_ = pc.Close()
		<-done
	})
	return "https://localhost:" + itoa(pc.LocalAddr().(*net.UDPAddr).Port)
}

func itoa(n int) string { return fmtInt(int64(n)) }

// TestClientProtocolErrors: a server that breaks RFC 9114 gets the
// connection closed with the code the RFC names, and the request fails.
func TestClientProtocolErrors(t *testing.T) {
	testkit.CheckGoroutines(t)
	respond := func(b []byte) func(qc *quic.Conn) {
		return func(qc *quic.Conn) {
			openUni(t, qc, controlStream(okSettings), false)
			st, err := qc.AcceptStream(context.Background())
			if err != nil {
				return
			}
			_, _ = st.Write(b)
			_ = st.Close()
		}
	}
	for _, tc := range []struct {
		name  string
		serve func(qc *quic.Conn)
		code  ErrCode
	}{
		{"DATA before HEADERS", respond(frameBytes(frameData, []byte("x"))), ErrCodeFrameUnexpected},
		{"PUSH_PROMISE", respond(frameBytes(framePushPromise, []byte{0, 0, 0})), ErrCodeIDError},
		{"truncated HEADERS", respond(frameBytes(frameHeaders, encodeFields(":status", "200"))[:3]), ErrCodeFrameError},
		{"HEADERS after trailers", respond(append(append(frameBytes(frameHeaders, encodeFields(":status", "200")),
			frameBytes(frameHeaders, encodeFields("x-t", "1"))...), frameBytes(frameHeaders, encodeFields("x-t", "2"))...)), ErrCodeFrameUnexpected},
		{"missing SETTINGS", func(qc *quic.Conn) {
			openUni(t, qc, controlStream(appendIDFrame(nil, frameGoAway, 0)), false)
		}, ErrCodeMissingSettings},
		{"GOAWAY with a push ID", func(qc *quic.Conn) {
			openUni(t, qc, controlStream(okSettings, appendIDFrame(nil, frameGoAway, 3)), false)
		}, ErrCodeIDError},
		{"GOAWAY growing", func(qc *quic.Conn) {
			openUni(t, qc, controlStream(okSettings, appendIDFrame(nil, frameGoAway, 4), appendIDFrame(nil, frameGoAway, 8)), false)
		}, ErrCodeIDError},
		{"MAX_PUSH_ID from a server", func(qc *quic.Conn) {
			openUni(t, qc, controlStream(okSettings, appendIDFrame(nil, frameMaxPushID, 3)), false)
		}, ErrCodeFrameUnexpected},
		{"push stream", func(qc *quic.Conn) {
			openUni(t, qc, appendVarint(appendVarint(nil, streamPush), 0), false)
		}, ErrCodeIDError},
		{"bidirectional stream from a server", func(qc *quic.Conn) {
			st, _ := qc.OpenStream()
			_, _ = st.Write([]byte{0})
		}, ErrCodeStreamCreationError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The first connection's end; the client may open others.
			got := make(chan error, 1)
			url := rawServer(t, func(qc *quic.Conn) {
				// The client's control stream: its handshake is over.
				if _, err := qc.AcceptUniStream(context.Background()); err != nil {
					return
				}
				tc.serve(qc)
				code, err := peerCloseCode(qc)
				if err == nil && code != tc.code {
					err = fmt.Errorf("closed with %s, want %s", code, tc.code)
				}
				select {
				case got <- err:
				default:
				}
			})
			tr := newTransport(t)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/", nil)
			// The request fails or its body ends early: what counts is
			// the code the client closes the connection with, below.
			if resp, err := tr.RoundTrip(req); err == nil {
				_, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			select {
			case err := <-got:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(6 * time.Second):
				t.Fatal("the client did not close the connection")
			}
		})
	}
}

package quic

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"
	_ "unsafe" // for go:linkname

	quicgo "github.com/quic-go/quic-go"
	"github.com/satquic/satquic/internal/testkit"
)

// Interoperability with quic-go, a test-only peer: both directions over
// real loopback sockets, several streams on one connection, and the
// ChaCha20-Poly1305 cipher suite.
//
// The little protocol on each bidirectional stream: the client sends
// 'D' and an 8-byte size, and the server answers with that many bytes of
// testkit.Payload(size, size) then FIN; or 'U' then data until FIN, and the server
// answers with the data's SHA-256.

// crypto/tls offers no knob for TLS 1.3 cipher suites; these are its
// preference lists, which quic-go's own tests reach the same way.
//
//go:linkname tls13Suites crypto/tls.defaultCipherSuitesTLS13
var tls13Suites []uint16

//go:linkname tls13SuitesNoAES crypto/tls.defaultCipherSuitesTLS13NoAES
var tls13SuitesNoAES []uint16

// chachaOnly restricts both ends of every handshake in the process to
// ChaCha20-Poly1305 until the test ends.
func chachaOnly(t *testing.T) {
	saved, savedNoAES := tls13Suites, tls13SuitesNoAES
	tls13Suites = []uint16{tls.TLS_CHACHA20_POLY1305_SHA256}
	tls13SuitesNoAES = []uint16{tls.TLS_CHACHA20_POLY1305_SHA256}
	t.Cleanup(func() { tls13Suites, tls13SuitesNoAES = saved, savedNoAES })
}

var interopSizes = []int{2 << 20, 3 << 20, 5 << 20}

const interopUpload = 2 << 20

// serveInterop answers one stream of the test protocol.
func serveInterop(rw io.ReadWriteCloser) error {
	var op [1]byte
	if _, err := io.ReadFull(rw, op[:]); err != nil {
		return err
	}
	switch op[0] {
	case 'D':
		var sz [8]byte
		if _, err := io.ReadFull(rw, sz[:]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint64(sz[:])
		if _, err := rw.Write(testkit.Payload(int(n), n)); err != nil {
			return err
		}
	case 'U':
		h := sha256.New()
		if _, err := io.Copy(h, rw); err != nil {
			return err
		}
		if _, err := rw.Write(h.Sum(nil)); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown request %q", op[0])
	}
	return rw.Close()
}

// runInteropClient runs the downloads and the upload concurrently on
// streams opened by open, and checks every answer.
func runInteropClient(open func() (io.ReadWriteCloser, error)) error {
	var wg sync.WaitGroup
	errs := make([]error, len(interopSizes)+1)
	for i, size := range interopSizes {
		wg.Go(func() {
			errs[i] = func() error {
				s, err := open()
				if err != nil {
					return err
				}
				req := append([]byte{'D'}, binary.BigEndian.AppendUint64(nil, uint64(size))...)
				if _, err := s.Write(req); err != nil {
					return err
				}
				if err := s.Close(); err != nil {
					return err
				}
				n, got, err := testkit.ReadAllSum(s)
				if err != nil {
					return fmt.Errorf("download of %d bytes after %d: %w", size, n, err)
				}
				if want := sum(testkit.Payload(size, uint64(size))); n != int64(size) || got != want {
					return fmt.Errorf("download: %d bytes, sha256 %x; want %d bytes, %x", n, got, size, want)
				}
				return nil
			}()
		})
	}
	wg.Go(func() {
		errs[len(interopSizes)] = func() error {
			s, err := open()
			if err != nil {
				return err
			}
			data := testkit.Payload(interopUpload, 99)
			if _, err := s.Write(append([]byte{'U'}, data...)); err != nil {
				return err
			}
			if err := s.Close(); err != nil {
				return err
			}
			got, err := io.ReadAll(s)
			if want := sum(data); err != nil || string(got) != string(want[:]) {
				return fmt.Errorf("upload: server's sha256 %x (err %v), want %x", got, err, want)
			}
			return nil
		}()
	})
	wg.Wait()
	return errors.Join(errs...)
}

func checkChaCha(t *testing.T, who string, st tls.ConnectionState) {
	t.Helper()
	if st.CipherSuite != tls.TLS_CHACHA20_POLY1305_SHA256 {
		t.Errorf("%s negotiated %s", who, tls.CipherSuiteName(st.CipherSuite))
	}
	if st.NegotiatedProtocol != testALPN {
		t.Errorf("%s negotiated ALPN %q", who, st.NegotiatedProtocol)
	}
}

func TestInteropClientToQuicGo(t *testing.T) {
	testkit.CheckGoroutines(t)
	chachaOnly(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ln, err := quicgo.ListenAddr("127.0.0.1:0", serverTLS(), &quicgo.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	serverState := make(chan tls.ConnectionState, 1)
	var served sync.WaitGroup
	served.Go(func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		serverState <- c.ConnectionState().TLS
		for {
			s, err := c.AcceptStream(ctx)
			if err != nil {
				return
			}
			served.Go(func() {
				if err := serveInterop(s); err != nil {
					s.CancelWrite(1)
				}
			})
		}
	})
	defer served.Wait()
	c, err := DialAddr(ctx, ln.Addr().String(), clientTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	checkChaCha(t, "satquic client", c.ConnectionState().TLS)
	checkChaCha(t, "quic-go server", <-serverState)
	err = runInteropClient(func() (io.ReadWriteCloser, error) { return c.OpenStreamSync(ctx) })
	if err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	t.Logf("handshake %v, srtt %v, %d packets received, %d lost, ECN %+v", st.HandshakeDuration, st.SmoothedRTT, st.PacketsReceived, st.PacketsLost, st.ECN)
	// quic-go counts the marks it reads from the socket and reports
	// them: the marks validate (RFC 9000 section 13.4.2).
	if st.ECN.State == "failed" {
		t.Errorf("ECN failed against quic-go: %s", st.ECN.Failure)
	}
	checkNoAckFrequency(t, "satquic client", st)
}

// checkNoAckFrequency: quic-go v0.65 does not offer min_ack_delay, so
// satquic, which offers it by default, neither sees an offer nor sends
// ACK_FREQUENCY or IMMEDIATE_ACK (principle 5 of docs/architecture.md).
func checkNoAckFrequency(t *testing.T, who string, st ConnectionStats) {
	t.Helper()
	if af := st.AckFrequency; af.PeerOffered || af.FramesSent != 0 || af.ImmediateAcksSent != 0 || af.FramesReceived != 0 {
		t.Errorf("%s against quic-go: ACK frequency %+v", who, af)
	}
}

func TestInteropQuicGoToServer(t *testing.T) {
	testkit.CheckGoroutines(t)
	chachaOnly(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := ListenAddr("127.0.0.1:0", serverTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	serverState := make(chan tls.ConnectionState, 1)
	serverConn := make(chan *Conn, 1)
	var served sync.WaitGroup
	served.Go(func() {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		serverState <- c.ConnectionState().TLS
		serverConn <- c
		for {
			s, err := c.AcceptStream(ctx)
			if err != nil {
				return
			}
			served.Go(func() {
				if err := serveInterop(s); err != nil {
					s.CancelWrite(1)
				}
			})
		}
	})
	defer served.Wait()
	c, err := quicgo.DialAddr(ctx, l.Addr().String(), clientTLS(), &quicgo.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	checkChaCha(t, "quic-go client", c.ConnectionState().TLS)
	checkChaCha(t, "satquic server", <-serverState)
	err = runInteropClient(func() (io.ReadWriteCloser, error) { return c.OpenStreamSync(ctx) })
	if err != nil {
		t.Fatal(err)
	}
	checkNoAckFrequency(t, "satquic server", (<-serverConn).Stats())
}

//go:build linux

package interop

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
)

// satquicImpl is satquic itself, in this process: its quic package with
// the hq-interop server and client of internal/hq and its http3 package,
// configured as "satquic serve" and "satquic get" are (FEC offered).
type satquicImpl struct{}

func (*satquicImpl) Name() string { return "satquic" }

func (*satquicImpl) Protocols() []string { return []string{protoHQ, protoH3} }

func (*satquicImpl) Prepare(context.Context, string) error { return nil }

func (*satquicImpl) Unsupported(role Role, test string) string {
	if role == Client && test == testChaCha20 {
		// The server side works: it accepts a client that offers
		// ChaCha20 alone.
		return "crypto/tls offers every TLS 1.3 cipher suite and has no setting to offer ChaCha20 alone"
	}
	return ""
}

// satquicConfig is the configuration of "satquic serve" and "satquic get":
// the defaults, with FEC offered (it runs only between two satquic ends).
func satquicConfig() *quic.Config {
	return &quic.Config{FEC: &quic.FECConfig{}}
}

// openKeyLog creates the file an endpoint writes its TLS secrets to.
func openKeyLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
}

type satquicServer struct {
	pc     *net.UDPConn
	tr     *quic.Transport
	l      *quic.Listener
	h3     *http3.Server
	keyLog *os.File
	root   *os.Root
	cancel context.CancelFunc
	done   chan error
}

func (*satquicImpl) StartServer(ctx context.Context, j *serverJob) (server, error) {
	root, err := os.OpenRoot(j.www)
	if err != nil {
		return nil, err
	}
	keyLog, err := openKeyLog(j.keyLog)
	if err != nil {
		root.Close()
		return nil, err
	}
	pc, err := j.host.listenUDP(netip.AddrPortFrom(j.host.addr, j.port))
	if err != nil {
		root.Close()
		keyLog.Close()
		return nil, err
	}
	conf := satquicConfig()
	s := &satquicServer{pc: pc, tr: &quic.Transport{Conn: pc}, keyLog: keyLog, root: root, done: make(chan error, 1)}
	listen := s.tr.Listen
	switch j.test {
	case testRetry:
		conf.RequireAddressValidation = func(net.Addr) bool { return true }
	case testZeroRTT:
		// As "satquic serve --0rtt": requests that came in 0-RTT are
		// answered in 0.5-RTT, and the HTTP/3 connection (its control
		// stream) is set up before the client's Finished arrives.
		conf.Allow0RTT = true
		listen = s.tr.ListenEarly
	case testV2:
		// A server that prefers v2 moves a client that offers it there
		// (compatible version negotiation, RFC 9368).
		conf.Versions = []quic.Version{quic.Version2, quic.Version1}
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{j.cert.tls}, NextProtos: []string{j.proto}, KeyLogWriter: keyLog}
	if s.l, err = listen(tlsConf, conf); err != nil {
		s.close()
		return nil, err
	}
	errLog, err := os.Create(filepath.Join(j.logs, "server.log"))
	if err != nil {
		s.close()
		return nil, err
	}
	var serveCtx context.Context
	serveCtx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if j.proto == protoH3 {
		s.h3 = &http3.Server{Handler: http.FileServerFS(root.FS()), ErrorLog: log.New(errLog, "", log.LstdFlags)}
	}
	go func() {
		defer errLog.Close()
		var err error
		if s.h3 != nil {
			err = s.h3.Serve(s.l)
		} else {
			srv := &hq.Server{Root: root, Log: func(format string, args ...any) { fmt.Fprintf(errLog, format+"\n", args...) }}
			err = srv.Serve(serveCtx, s.l)
		}
		s.done <- err
	}()
	return s, nil
}

func (s *satquicServer) addr() netip.AddrPort { return s.pc.LocalAddr().(*net.UDPAddr).AddrPort() }

func (s *satquicServer) stop() error {
	s.cancel()
	err := s.l.Close()
	if s.h3 != nil {
		err = errors.Join(err, s.h3.Close())
	}
	serr := <-s.done
	if serr != nil && !errors.Is(serr, quic.ErrServerClosed) && !errors.Is(serr, http3.ErrServerClosed) && !errors.Is(serr, context.Canceled) {
		err = errors.Join(err, serr)
	}
	return errors.Join(err, s.close())
}

func (s *satquicServer) close() error {
	_ = s.tr.Close()
	return errors.Join(s.pc.Close(), s.keyLog.Close(), s.root.Close())
}

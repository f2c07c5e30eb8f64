package quic

import (
	"context"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	"github.com/satquic/satquic/internal/testkit"
)

// DATAGRAM frames against quic-go over loopback, both ways: the client
// sends 1000 datagrams, the server echoes each. Loopback may drop a
// datagram under load, so the client sends an unanswered one again after
// a second; the test checks content and counts, not timing.

const (
	interopDatagrams    = 1000
	interopDatagramSize = 1000
)

func TestDatagramInteropClientToQuicGo(t *testing.T) {
	testkit.CheckGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ln, err := quicgo.ListenAddr("127.0.0.1:0", serverTLS(), &quicgo.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan struct{})
	go func() {
		defer close(served)
		c, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		if !c.ConnectionState().SupportsDatagrams.Remote {
			t.Error("quic-go server: the satquic client offered no DATAGRAM frames")
		}
		echoDatagrams(ctx, c)
	}()
	defer func() { <-served }()
	c, err := DialAddr(ctx, ln.Addr().String(), clientTLS(), &Config{EnableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	if !c.ConnectionState().SupportsDatagrams {
		t.Fatal("satquic client: no datagram support")
	}
	if err := runDatagramEcho(ctx, c, interopDatagrams, interopDatagramSize, 64, time.Second); err != nil {
		t.Fatal(err)
	}
	st := c.Stats().Datagrams
	t.Logf("satquic client: %+v", st)
	if st.Received < interopDatagrams {
		t.Errorf("received %d datagrams", st.Received)
	}
}

func TestDatagramInteropQuicGoToServer(t *testing.T) {
	testkit.CheckGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := ListenAddr("127.0.0.1:0", serverTLS(), &Config{EnableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	served := make(chan *Conn, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			close(served)
			return
		}
		served <- c
		echoDatagrams(ctx, c)
	}()
	c, err := quicgo.DialAddr(ctx, l.Addr().String(), clientTLS(), &quicgo.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	if !c.ConnectionState().SupportsDatagrams.Remote {
		t.Fatal("quic-go client: the satquic server offered no DATAGRAM frames")
	}
	s := <-served
	if s == nil || !s.ConnectionState().SupportsDatagrams {
		t.Fatal("satquic server: no datagram support")
	}
	if err := runDatagramEcho(ctx, c, interopDatagrams, interopDatagramSize, 64, time.Second); err != nil {
		t.Fatal(err)
	}
	st := s.Stats().Datagrams
	t.Logf("satquic server: %+v", st)
	if st.Received < interopDatagrams || st.Sent < interopDatagrams {
		t.Errorf("server received %d, sent %d datagrams", st.Received, st.Sent)
	}
}

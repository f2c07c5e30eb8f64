package main

import (
	"context"
	"crypto/tls"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/quic"
)

// serveCostConns is how many connections TestServeCostPerConnection
// opens.
const serveCostConns = 500

// TestServeCostPerConnection measures what serve holds for each HTTP/3
// connection whose client completed the handshake and then vanished
// without a word, with the clients' own state gone: the cost behind the
// defaults of --max-conns and --max-conns-per-ip. The README's serve
// section quotes its log:
//
//	go test ./cmd/satquic/ -run TestServeCostPerConnection -v -count=1
func TestServeCostPerConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 500 connections")
	}
	addr, _ := startServe(t, t.TempDir(), "--shutdown-timeout", "1s")
	server := net.UDPAddrFromAddrPort(netip.MustParseAddrPort(addr))
	base := measureProcess()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		sockets []*vanishingSocket
		clients []*quic.Transport
	)
	sem := make(chan struct{}, 16)
	for range serveCostConns {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := &vanishingSocket{PacketConn: pc}
		tr := &quic.Transport{Conn: s}
		sockets, clients = append(sockets, s), append(clients, tr)
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			tc := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{http3.NextProtoH3}}
			if _, err := tr.Dial(ctx, server, tc, nil); err != nil {
				mu.Lock()
				t.Errorf("Dial: %v", err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// The server's control and QPACK streams arrive and are acknowledged.
	time.Sleep(time.Second)
	for i, s := range sockets {
		s.vanish.Store(true)
		_ = clients[i].Close()
		_ = s.Close()
	}
	time.Sleep(time.Second)
	held := measureProcess()
	heap := float64(int64(held.heap)-int64(base.heap)) / 1024 / serveCostConns
	stacks := float64(int64(held.stacks)-int64(base.stacks)) / 1024 / serveCostConns
	g := float64(held.goroutines-base.goroutines) / serveCostConns
	t.Logf("per idle HTTP/3 connection: %.1f KiB heap, %.1f KiB stacks, %.2f goroutines", heap, stacks, g)
	if heap+stacks > 128 || g > 4 {
		t.Errorf("an HTTP/3 connection costs %.1f KiB and %.2f goroutines, more than the 128 KiB and 4 the defaults assume", heap+stacks, g)
	}
}

type processCost struct {
	heap, stacks uint64
	goroutines   int
}

func measureProcess() processCost {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return processCost{heap: m.HeapAlloc, stacks: m.StackInuse, goroutines: runtime.NumGoroutine()}
}

// vanishingSocket sends until vanish is set, then drops what is sent: a
// client that disappears without a word.
type vanishingSocket struct {
	net.PacketConn
	vanish atomic.Bool
}

func (v *vanishingSocket) WriteTo(p []byte, addr net.Addr) (int, error) {
	if v.vanish.Load() {
		return len(p), nil
	}
	return v.PacketConn.WriteTo(p, addr)
}

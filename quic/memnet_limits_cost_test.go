package quic

import (
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// heldCost is what the process holds: live heap, goroutine stacks and
// goroutines.
type heldCost struct {
	heap, stacks uint64
	goroutines   int
}

func measureHeld() heldCost {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return heldCost{heap: m.HeapAlloc, stacks: m.StackInuse, goroutines: runtime.NumGoroutine()}
}

// per is the cost of each of n things, from before to c.
func (c heldCost) per(before heldCost, n int) (heapKiB, stackKiB, goroutines float64) {
	return float64(int64(c.heap)-int64(before.heap)) / 1024 / float64(n),
		float64(int64(c.stacks)-int64(before.stacks)) / 1024 / float64(n),
		float64(c.goroutines-before.goroutines) / float64(n)
}

// costClients is how many connections TestServerCostPerConnection opens
// of each kind: costAddrs addresses with costPerAddr each.
const (
	costAddrs   = 40
	costPerAddr = 25
	costClients = costAddrs * costPerAddr
)

// TestServerCostPerConnection measures what a server holds for a
// handshake left silent by its client, and for an established connection
// whose client vanished (the Listener accepted it and one goroutine waits
// in AcceptStream, as an application's would), with the clients' own
// state gone; with FEC configured on the server, and without. The README's
// serve section quotes its log:
//
//	go test ./quic/ -run TestServerCostPerConnection -v -count=1
func TestServerCostPerConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 2,000 connections")
	}
	for _, fec := range []*FECConfig{nil, {}} {
		t.Run(fmt.Sprintf("fec=%v", fec != nil), func(t *testing.T) {
			testServerCost(t, &Config{RequireAddressValidation: retryAlways, FEC: fec})
		})
	}
}

// maxCostKiB is the most a handshake or an idle connection may cost for
// the defaults to hold, FEC included.
const maxCostKiB = 128

func testServerCost(t *testing.T, sconf *Config) {
	synctest.Test(t, func(t *testing.T) {
		e := newLimitsEnv(t, sconf)
		base := measureHeld()

		var clients []*Transport
		for i := range costAddrs {
			tr := e.silentClient(netip.AddrPortFrom(attackerAddr(i), 1000))
			clients = append(clients, tr)
			e.dialSilent(tr, costPerAddr)
		}
		time.Sleep(100 * time.Millisecond)
		e.cancel()
		e.dials.Wait()
		for _, tr := range clients {
			_ = tr.Close()
		}
		if hs, _, _ := e.l.held(attackerIP); hs != costClients {
			t.Fatalf("server holds %d handshakes, want %d", hs, costClients)
		}
		handshakes := measureHeld()
		heap, stack, g := handshakes.per(base, costClients)
		t.Logf("per silent handshake: %.1f KiB heap, %.1f KiB stacks, %.2f goroutines", heap, stack, g)
		checkCost(t, "handshake", heap+stack, g, maxCostKiB, 2)
		// Past handshakeAwake, the silent handshakes park.
		time.Sleep(handshakeAwake)
		heap, stack, g = measureHeld().per(base, costClients)
		t.Logf("per silent handshake after %v: %.1f KiB heap, %.1f KiB stacks, %.2f goroutines", handshakeAwake, heap, stack, g)
		checkCost(t, "handshake", heap+stack, g, maxCostKiB, 1)

		// The handshakes time out (20 s) before the connections come.
		time.Sleep(25 * time.Second)
		base = measureHeld()
		var sockets []*vanishingConn
		var wg sync.WaitGroup
		for i := range costAddrs {
			pc := &vanishingConn{Conn: e.socket(netip.AddrPortFrom(attackerAddr(100+i), 1000))}
			sockets = append(sockets, pc)
			tr := e.client(pc.LocalAddrPort(), pc)
			for range costPerAddr {
				wg.Go(func() {
					if _, err := dialServer(tr, nil); err != nil {
						t.Errorf("Dial: %v", err)
					}
				})
			}
		}
		wg.Wait()
		time.Sleep(time.Second)
		for _, pc := range sockets {
			pc.vanish.Store(true)
		}
		for _, tr := range e.clients[len(clients):] {
			_ = tr.Close()
		}
		time.Sleep(time.Second)
		if _, est, _ := e.l.held(attackerIP); est != costClients {
			t.Fatalf("server holds %d connections, want %d", est, costClients)
		}
		conns := measureHeld()
		heap, stack, g = conns.per(base, costClients)
		t.Logf("per established idle connection: %.1f KiB heap, %.1f KiB stacks, %.2f goroutines (one of the application)", heap, stack, g)
		checkCost(t, "connection", heap+stack, g, maxCostKiB, 2)
	})
}

// checkCost fails the test if a connection costs more than maxKiB or
// maxGoroutines: a regression the limits' defaults did not account for.
func checkCost(t *testing.T, what string, kib, goroutines, maxKiB, maxGoroutines float64) {
	t.Helper()
	if kib > maxKiB || goroutines > maxGoroutines {
		t.Errorf("a %s costs %.1f KiB and %.2f goroutines, more than the %v KiB and %v the defaults assume",
			what, kib, goroutines, maxKiB, maxGoroutines)
	}
}

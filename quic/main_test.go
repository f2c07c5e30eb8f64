package quic

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain runs the package's tests, examples and benchmarks, then checks
// that none left a goroutine of a QUIC stack behind: satquic's (a
// Transport's reader, a connection's goroutine, the relay of the
// emulator), quic-go's, or a TLS handshake that crypto/tls runs for QUIC.
// checkGoroutines catches a leak at the test that caused it, by counting;
// this check covers every test and benchmark, also those that do not call
// it, and names the goroutines. Goroutines get leakGrace to end, as
// connections that close wait for their peer or for a timer.
func TestMain(m *testing.M) {
	code := m.Run()
	if leaked := waitStackGoroutines(leakGrace); len(leaked) > 0 {
		fmt.Fprintf(os.Stderr, "%d goroutines of the QUIC stacks still run after the tests:\n\n%s\n", len(leaked), strings.Join(leaked, "\n\n"))
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

const leakGrace = 10 * time.Second

// stackMarkers are the frames that mark a goroutine as the stacks'.
var stackMarkers = []string{
	"github.com/satquic/satquic/",
	"github.com/quic-go/quic-go",
	"crypto/tls.(*QUICConn)",
	"crypto/tls.(*Conn).HandshakeContext",
}

// waitStackGoroutines waits up to grace for the goroutines of the stacks
// to end and returns the stacks of those still running.
func waitStackGoroutines(grace time.Duration) []string {
	deadline := time.Now().Add(grace)
	for {
		leaked := stackGoroutines()
		if len(leaked) == 0 || time.Now().After(deadline) {
			return leaked
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stackGoroutines returns the stacks of the running goroutines that have a
// frame of the stacks, other than the caller's.
func stackGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	// The first goroutine is the caller's.
	all := strings.Split(string(buf), "\n\n")
	var out []string
	for _, g := range all[1:] {
		for _, m := range stackMarkers {
			if strings.Contains(g, m) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// Package memnet is an in-memory UDP network for goroutine code under test:
// net.PacketConns whose packets cross netsim Links in the time of the
// process, which under testing/synctest is the bubble's virtual time. A QUIC
// driver, an HTTP/3 client and server, or the emulator's relay run on it
// unchanged, and a test can assert exact arrival times:
//
//	synctest.Test(t, func(t *testing.T) {
//		n := memnet.New(memnet.Config{Seed: 1})
//		n.AddPath(client, server, up, down) // two netsim.LinkConfigs
//		c, _ := n.Listen(clientAddr)
//		...
//	})
//
// Create the Network inside the bubble: it reads the clock and arms timers
// (time.AfterFunc), which must belong to the bubble. It starts no goroutine
// of its own. Each link direction has one timer, armed for the link's next
// due packet; when it fires, due packets move to the destination's receive
// queue (dropped when the queue holds ReceiveBufferBytes, like a full socket
// buffer) and blocked readers wake.
//
// Conn follows net.UDPConn where it matters: WriteTo copies the payload and
// never blocks (the link's queue drops instead), ReadFrom truncates to the
// buffer, deadlines give errors for which os.ErrDeadlineExceeded matches and
// Timeout() is true, and Close unblocks readers with net.ErrClosed.
package memnet

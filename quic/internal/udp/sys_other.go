//go:build !linux || purego

package udp

import "net"

// openUDP sizes the socket buffers through the portable net API; this
// build has no batched path, so it returns no batcher. The kernel's grant
// cannot be read back portably, so the sizes are reported as unknown.
func openUDP(uc *net.UDPConn, opts Options, _ *counters) (batcher, Capabilities, error) {
	if size := opts.socketBuffer(); size > 0 {
		// A refused size leaves the default, which still works, only
		// slower; Capabilities reports the sizes as unknown either way.
		_ = uc.SetReadBuffer(size)
		_ = uc.SetWriteBuffer(size)
	}
	return nil, Capabilities{}, nil
}

package tunnelbench

import "github.com/satquic/satquic/bench"

// innerControl sets the congestion control cc (TCP_CONGESTION) on the
// inner TCP's sockets before they listen or connect; an accepted
// connection takes its listener's. Empty cc leaves the kernel's default
// (DefaultTCPCongestionControl), and innerControl returns nil.
func innerControl(cc string) socketControl {
	if cc == "" {
		return nil
	}
	return bench.TCPCongestionControl(cc)
}

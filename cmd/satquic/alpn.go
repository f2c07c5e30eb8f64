package main

import (
	"fmt"
	"strings"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/internal/hq"
)

// The application protocols serve and get speak, in the order of
// preference: HTTP/3 first, hq-interop (HTTP/0.9) for the QUIC interop
// runner and for peers without HTTP/3.
var knownALPNs = []string{http3.NextProtoH3, hq.ALPN}

// defaultALPN is the value of --alpn that offers both.
var defaultALPN = strings.Join(knownALPNs, ",")

// parseALPN reads --alpn: one protocol, or several separated by commas,
// in the order of preference.
func parseALPN(s string) ([]string, error) {
	var protos []string
	for p := range strings.SplitSeq(s, ",") {
		p = strings.TrimSpace(p)
		known := false
		for _, k := range knownALPNs {
			known = known || p == k
		}
		if !known {
			return nil, fmt.Errorf("%w: --alpn: unknown protocol %q (want %s)", errUsage, p, strings.Join(knownALPNs, " or "))
		}
		for _, q := range protos {
			if q == p {
				return nil, fmt.Errorf("%w: --alpn: %s given twice", errUsage, p)
			}
		}
		protos = append(protos, p)
	}
	return protos, nil
}

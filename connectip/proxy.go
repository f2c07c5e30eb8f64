package connectip

import (
	"fmt"
	"net/netip"
	"slices"
)

// ProxyConfig configures NewProxy.
type ProxyConfig struct {
	Config
	// Pool, when set, answers the client's ADDRESS_REQUEST capsules with
	// addresses of their IP version the client does not have yet; they go
	// back to the pool when the session closes. Without it, a request is
	// answered with an assigned address of its version, or rejected.
	Pool *AddressPool
}

// NewProxy starts the proxy end of a CONNECT-IP tunnel on c, the stream of
// a request the server accepted: it assigns the client the prefixes
// assign (Request ID 0; none sends no capsule) and advertises routes, put
// in the order RFC 9484 section 4.7.3 demands. It then forwards only
// packets from the client whose source is within what it assigned and
// whose destination is within routes, dropping and counting the others.
// On error the carrier is closed.
func NewProxy(c Carrier, assign []netip.Prefix, routes []IPRoute, cfg ProxyConfig) (*Session, error) {
	s := newSession(c, cfg.Config)
	s.pool = cfg.Pool
	for _, p := range assign {
		s.assigned = append(s.assigned, AssignedAddress{Prefix: p})
	}
	s.routes = slices.Clone(routes)
	SortRoutes(s.routes)
	s.assignedSent, s.advertised = true, true
	err := checkMTU(s.cfg.MTU, carriesIPv6(slices.Concat(assign, cfg.Pool.prefixes()), routes))
	var b []byte
	if err == nil {
		b, err = s.setupCapsules()
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("connectip: proxy configuration: %w", err)
	}
	if err := s.writeCapsule(b); err != nil {
		c.Close()
		return nil, err
	}
	s.start()
	return s, nil
}

// setupCapsules encodes the proxy's first ADDRESS_ASSIGN, if it assigns
// anything, and its ROUTE_ADVERTISEMENT.
func (s *Session) setupCapsules() ([]byte, error) {
	var b []byte
	var err error
	if len(s.assigned) > 0 {
		if b, err = AppendAddressAssign(b, s.assigned); err != nil {
			return nil, err
		}
	}
	return AppendRouteAdvertisement(b, s.routes)
}

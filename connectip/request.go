package connectip

import (
	"fmt"
	"net/netip"
	"slices"
)

// onRequest answers the peer's ADDRESS_REQUEST (RFC 9484 section 4.7.2):
// an Assigned Address with the same Request ID for each entry, the
// address granted or the all-zero rejection, in an ADDRESS_ASSIGN that
// also lists everything assigned before. A Request ID used twice is
// malformed.
func (s *Session) onRequest(reqs []RequestedAddress) error {
	s.mu.Lock()
	if len(s.requested)+len(reqs) > maxAddressRequests {
		s.mu.Unlock()
		return fmt.Errorf("the peer sent more than %d address requests", maxAddressRequests)
	}
	var rejected []AssignedAddress
	for _, r := range reqs {
		if s.requested[r.RequestID] {
			s.mu.Unlock()
			return malformed("ADDRESS_REQUEST: request ID %d reused", r.RequestID)
		}
		s.requested[r.RequestID] = true
		if !s.grant(r) {
			rejected = append(rejected, rejection(r.RequestID, r.Prefix.Addr()))
		}
	}
	s.assignedSent = true
	list := append(slices.Clone(s.assigned), rejected...)
	s.mu.Unlock()
	b, err := AppendAddressAssign(nil, list)
	if err != nil {
		return err
	}
	return s.writeCapsule(b)
}

// grant assigns the peer an address for r and reports whether it could;
// s.mu is held. A peer that already has an address of r's IP version gets
// that one again under r's Request ID, so a client holds at most one
// address of each version from the pool however often it asks.
func (s *Session) grant(r RequestedAddress) bool {
	v := ipVersion(r.Prefix.Addr())
	for i, a := range s.assigned {
		if ipVersion(a.Prefix.Addr()) == v {
			s.assigned[i].RequestID = r.RequestID
			return true
		}
	}
	if s.pool == nil {
		return false
	}
	p, err := s.pool.Allocate(r.Prefix.Addr())
	if err != nil {
		return false
	}
	s.pooled[v] = p
	s.assigned = append(s.assigned, AssignedAddress{RequestID: r.RequestID, Prefix: p})
	return true
}

// sourceAllowed reports whether src is within addrs.
func sourceAllowed(addrs []AssignedAddress, src netip.Addr) bool {
	for _, a := range addrs {
		if a.Prefix.Contains(src) {
			return true
		}
	}
	return false
}

// routeAllowed reports whether a packet of protocol proto to dst may use
// one of routes.
func routeAllowed(routes []IPRoute, dst netip.Addr, proto uint8) bool {
	for _, r := range routes {
		if r.Allows(dst, proto) {
			return true
		}
	}
	return false
}

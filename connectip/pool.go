package connectip

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
)

// ErrPoolExhausted is returned when an AddressPool has no free address of
// the family asked for.
var ErrPoolExhausted = errors.New("address pool exhausted")

// AddressPool hands each client of a proxy its own address, one at a time,
// and takes it back when the client's session closes. It is safe for
// concurrent use by the sessions of one proxy.
//
// It hands out the addresses of its prefixes as host prefixes (/32, /128),
// except the first address of a prefix holding more than two: the network
// address, which some stacks refuse as a host's, and usually the proxy's
// own end of the tunnel.
type AddressPool struct {
	mu     sync.Mutex
	ranges []poolRange
	inUse  map[netip.Addr]bool
}

type poolRange struct {
	prefix netip.Prefix
	first  netip.Addr // the lowest address handed out
	next   netip.Addr // where the next search starts
}

// NewAddressPool returns a pool of the addresses of prefixes.
func NewAddressPool(prefixes ...netip.Prefix) (*AddressPool, error) {
	p := &AddressPool{inUse: make(map[netip.Addr]bool)}
	for _, pfx := range prefixes {
		if err := checkPrefix(pfx); err != nil {
			return nil, fmt.Errorf("address pool: %w", err)
		}
		first := pfx.Addr()
		if pfx.Addr().BitLen()-pfx.Bits() >= 2 {
			first = first.Next()
		}
		p.ranges = append(p.ranges, poolRange{prefix: pfx, first: first, next: first})
	}
	if len(p.ranges) == 0 {
		return nil, errors.New("address pool: no prefix")
	}
	return p, nil
}

// Allocate takes a free address of want's IP version: want itself when it
// is in the pool and free, otherwise the next free one. An unspecified
// want (0.0.0.0 or ::) asks for any address of its version.
func (p *AddressPool) Allocate(want netip.Addr) (netip.Prefix, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !want.IsUnspecified() && p.free(want) {
		return p.take(want), nil
	}
	for i := range p.ranges {
		r := &p.ranges[i]
		if r.prefix.Addr().BitLen() != want.BitLen() {
			continue
		}
		// Among len(inUse)+1 successive addresses one is free, unless the
		// range is smaller than that: the search is bounded either way.
		a := r.next
		if !r.prefix.Contains(a) {
			a = r.first
		}
		for range len(p.inUse) + 1 {
			if p.free(a) {
				r.next = a.Next()
				return p.take(a), nil
			}
			if a = a.Next(); !a.IsValid() || !r.prefix.Contains(a) {
				a = r.first
			}
		}
	}
	return netip.Prefix{}, fmt.Errorf("%w: no free IPv%d address", ErrPoolExhausted, ipVersion(want))
}

// free reports whether a is one of the pool's addresses and not taken.
func (p *AddressPool) free(a netip.Addr) bool {
	if p.inUse[a] {
		return false
	}
	for _, r := range p.ranges {
		if r.prefix.Contains(a) && !a.Less(r.first) {
			return true
		}
	}
	return false
}

func (p *AddressPool) take(a netip.Addr) netip.Prefix {
	p.inUse[a] = true
	return netip.PrefixFrom(a, a.BitLen())
}

// Release gives back an address Allocate handed out.
func (p *AddressPool) Release(a netip.Prefix) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.inUse, a.Addr())
}

// InUse is the number of addresses handed out and not released.
func (p *AddressPool) InUse() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.inUse)
}

// prefixes lists the pool's prefixes; a nil pool has none.
func (p *AddressPool) prefixes() []netip.Prefix {
	if p == nil {
		return nil
	}
	out := make([]netip.Prefix, len(p.ranges))
	for i, r := range p.ranges {
		out[i] = r.prefix
	}
	return out
}

package connectip

import (
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// defaultSetupTimeout bounds a client's wait for its addresses and routes
// when ClientConfig.Timeout is zero.
const defaultSetupTimeout = 10 * time.Second

// ErrNoAddress is returned by NewClient when the proxy assigned no address.
var ErrNoAddress = errors.New("connectip: the proxy assigned no address")

// ClientConfig configures NewClient.
type ClientConfig struct {
	Config
	// RequestAddresses are sent in an ADDRESS_REQUEST capsule, Request IDs
	// 1, 2, ... in order. An unspecified address (0.0.0.0/32, ::/128) asks
	// for any address of its version. Empty, the client sends no request
	// and waits for what the proxy assigns unprompted.
	RequestAddresses []netip.Prefix
	// Timeout bounds the wait for the addresses and routes. Zero means 10 s.
	Timeout time.Duration
}

// NewClient starts the client end of a CONNECT-IP tunnel on c, whose
// request the proxy accepted: it sends the address request, if any, then
// waits until the proxy has answered each requested address (or, without
// a request, assigned addresses) and advertised its routes (RFC 9484
// sections 4.7 and 8.1). On error the carrier is closed.
func NewClient(c Carrier, cfg ClientConfig) (*Session, error) {
	s := newSession(c, cfg.Config)
	s.waits = true
	reqs := make([]RequestedAddress, len(cfg.RequestAddresses))
	for i, p := range cfg.RequestAddresses {
		reqs[i] = RequestedAddress{RequestID: uint64(i + 1), Prefix: p}
	}
	s.requestsSent = uint64(len(reqs))
	if len(reqs) > 0 {
		b, err := AppendAddressRequest(nil, reqs)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("connectip: address request: %w", err)
		}
		if err := s.writeCapsule(b); err != nil {
			c.Close()
			return nil, err
		}
	}
	s.start()
	err := s.awaitSetup(reqs, cfg.Timeout)
	if err == nil {
		err = checkMTU(s.cfg.MTU, carriesIPv6(s.LocalPrefixes(), s.Routes()))
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// awaitSetup waits until the proxy's addresses and routes are in.
func (s *Session) awaitSetup(reqs []RequestedAddress, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = defaultSetupTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		ready, changed, addrs := s.setupDone(reqs), s.changed, len(s.local)
		s.mu.Unlock()
		if ready && addrs == 0 {
			return ErrNoAddress
		}
		if ready {
			return nil
		}
		select {
		case <-changed:
		case <-s.done:
			return fmt.Errorf("connectip: the session ended before the proxy's addresses and routes arrived: %w", s.Err())
		case <-timer.C:
			return fmt.Errorf("connectip: no address assignment and route advertisement from the proxy within %v", timeout)
		}
	}
}

// setupDone reports whether routes came and every request was answered
// (or, without requests, an assignment came); s.mu is held.
func (s *Session) setupDone(reqs []RequestedAddress) bool {
	if !s.peerAdvertised || !s.gotAssign {
		return false
	}
	for _, r := range reqs {
		if !s.answered[r.RequestID] {
			return false
		}
	}
	return true
}

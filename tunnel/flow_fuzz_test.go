package tunnel

import (
	"hash/maphash"
	"testing"
)

// mirror returns p with its two addresses, and its two ports when
// flowHash reads them, swapped: the same flow's other direction.
func mirror(p []byte) []byte {
	q := append([]byte(nil), p...)
	var addrLen, srcOff, l4 int
	switch q[0] >> 4 {
	case 4:
		addrLen, srcOff, l4 = 4, 12, int(q[0]&0x0f)*4
		if q[6]&0x1f != 0 || q[7] != 0 {
			l4 = len(q)
		}
	case 6:
		addrLen, srcOff, l4 = 16, 8, 40
	}
	a, b := q[srcOff:srcOff+addrLen], q[srcOff+addrLen:srcOff+2*addrLen]
	for i := range a {
		a[i], b[i] = b[i], a[i]
	}
	proto := q[9]
	if q[0]>>4 == 6 {
		proto = q[6]
	}
	if hasPorts(proto) && len(q) >= l4+4 {
		q[l4], q[l4+1], q[l4+2], q[l4+3] = q[l4+2], q[l4+3], q[l4], q[l4+1]
	}
	return q
}

// FuzzFlowHash: any bytes hash without a panic, anything shorter than an
// IP header or of another version to 0, and both directions of a flow
// alike (for IPv4, when the header length is valid), so that its packets
// take one lane each way.
func FuzzFlowHash(f *testing.F) {
	f.Add(withPorts(ipv4Packet("10.8.0.2", "203.0.113.1", 100, 0), 40000, 443))
	f.Add(ipv4Packet("10.8.0.2", "10.8.0.2", 28, 0))
	v6 := make([]byte, 60)
	v6[0], v6[6] = 0x60, 6
	v6[23], v6[39] = 1, 2
	f.Add(v6)
	f.Add([]byte{0x46, 0, 0, 24})
	seed := maphash.MakeSeed()
	f.Fuzz(func(t *testing.T, p []byte) {
		h := flowHash(seed, p)
		var min int
		if len(p) > 0 {
			switch p[0] >> 4 {
			case 4:
				min = 20
			case 6:
				min = 40
			}
		}
		if min == 0 || len(p) < min {
			if h != 0 {
				t.Fatalf("%x hashes to %#x", p, h)
			}
			return
		}
		if p[0]>>4 == 4 && p[0]&0x0f < 5 {
			// A header length below the minimum is malformed: the
			// session drops the packet, whichever lane it took.
			return
		}
		if back := flowHash(seed, mirror(p)); back != h {
			t.Fatalf("%x: the other direction hashes to %#x, not %#x", p, back, h)
		}
	})
}

// TestFlowHashTruncated: every prefix of a packet hashes without a panic,
// those cut inside the IP header to 0.
func TestFlowHashTruncated(t *testing.T) {
	seed := maphash.MakeSeed()
	p := withPorts(ipv4Packet("10.8.0.2", "203.0.113.1", 100, 0), 40000, 443)
	for i := range len(p) {
		h := flowHash(seed, p[:i])
		if i < 20 && h != 0 {
			t.Fatalf("a %d-byte prefix hashes to %#x", i, h)
		}
	}
}

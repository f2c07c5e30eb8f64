package capture

import (
	"fmt"
	"net/netip"
)

// Packet is one QUIC packet of a datagram.
type Packet struct {
	Type    PacketType
	Version uint32 // long headers
	// DCID and SCID are the connection IDs of a long header; a short
	// header's DCID is known once its connection is.
	DCID, SCID []byte
	// Token is an Initial packet's token, or a Retry packet's.
	Token []byte
	// Size is the packet's length in its datagram.
	Size       int
	FromClient bool
	// Conn is the connection the packet belongs to, nil if unknown.
	Conn *Conn

	// HeaderOpened: header protection was removed, so PN and KeyPhase
	// (1-RTT; -1 otherwise) are known.
	HeaderOpened bool
	PN           uint64
	KeyPhase     int
	// Opened: the payload was decrypted, and PayloadLen is its length;
	// otherwise PayloadLen is that of the protected payload.
	Opened     bool
	PayloadLen int
	// CryptoAtZero: the packet has a CRYPTO frame at offset 0 (in a
	// client's Initial, the start of a ClientHello).
	CryptoAtZero bool
	// AckECN: the packet has an ACK frame with ECN counts.
	AckECN bool
	// PathChallenges and PathResponses are the data of the packet's
	// PATH_CHALLENGE and PATH_RESPONSE frames (RFC 9000 section 8.2).
	PathChallenges, PathResponses [][8]byte
	// Padding is the bytes of PADDING frames in an opened payload: the
	// padding of a datagram that carries an Initial packet, or of a path
	// MTU probe, which carry no data.
	Padding int
	// MTUProbe: a 1-RTT packet of PING and PADDING frames alone, larger
	// than the 1200 bytes every path carries: a path MTU probe (RFC 9000
	// section 14.4, RFC 8899 section 4.1). A short header runs to the end
	// of its datagram, so the datagram is larger too.
	MTUProbe bool
	// Stray: a server's Initial packet that answers corrupted client
	// packets only: it opened with the keys of a connection ID only a
	// corrupted client Initial carried, or its connection has no client
	// Initial that opened. The server took a corrupted packet for a new
	// connection.
	Stray bool

	raw     rawPacket
	payload []byte
}

// Datagram is a record split into its packets.
type Datagram struct {
	Record
	Packets []*Packet
}

// Conn is one QUIC connection of the capture.
type Conn struct {
	// Client is the client's address at the capture point.
	Client netip.AddrPort
	// ClientCID is the Source Connection ID of the client's long headers.
	ClientCID []byte
	// ServerCIDs are the Source Connection IDs of the server's Initial
	// packets (one, except after a version change or a server's change of
	// mind); RetrySCIDs those of its Retry packets (a server without
	// state answers each Initial it takes for new with one).
	ServerCIDs [][]byte
	RetrySCIDs [][]byte

	ClientHello *ClientHello
	ServerHello *ServerHello
	// Secrets: the key log held this connection's secrets.
	Secrets bool
	// ServerParams are the server's transport parameters (from its
	// EncryptedExtensions, so only with the secrets), by ID.
	ServerParams map[uint64][]byte
	// ServerEarlyData: the server's EncryptedExtensions accepted 0-RTT.
	ServerEarlyData bool
	// ServerCertificate: the server's handshake had a Certificate message.
	ServerCertificate bool
	// ServerHandshakeCrypto is how many bytes of CRYPTO data the server
	// sent in Handshake packets (the end of its stream).
	ServerHandshakeCrypto uint64

	// keyDCID is the connection ID the Initial keys come from;
	// strayDCIDs are those of client Initial packets that opened with no
	// candidate (corrupted ones), which the server may have taken for a
	// connection of their own.
	keyDCID    []byte
	strayDCIDs [][]byte
	// clientOpened: a client Initial of the connection opened, so the
	// server had something authentic to answer.
	clientOpened bool
	// version is that of the latest long header: 1-RTT packets use it.
	version uint32
	// largest packet number per direction (0 client, 1 server) and space
	// (Initial, Handshake, application).
	largest [2][3]int64
	crypto  [2][2]cryptoStream // Initial and Handshake, per direction
	packets []*Packet
	// oneRTT: per direction, the current key generation and the
	// secrets of the generations so far.
	oneRTT [2]*keyChain
}

// Analysis is a capture read as QUIC.
type Analysis struct {
	Datagrams []*Datagram
	Conns     []*Conn
}

// Analyze reads records (in capture order) as QUIC, with the secrets of
// keys where it has them (nil: none).
func Analyze(records []Record, keys KeyLog) *Analysis {
	a := &Analysis{}
	t := tracker{byClientCID: map[connKey]*Conn{}, byFlow: map[netip.AddrPort][]*Conn{}}
	for _, r := range records {
		d := &Datagram{Record: r}
		for _, raw := range splitDatagram(r.Data) {
			p := &Packet{Type: raw.typ, Version: raw.version, DCID: raw.dcid, SCID: raw.scid,
				Token: raw.token, Size: len(raw.data), FromClient: r.FromClient, KeyPhase: -1, raw: raw}
			if raw.pnOffset > 0 {
				p.PayloadLen = len(raw.data) - raw.pnOffset
			}
			t.assign(a, p, &r)
			if p.Conn != nil {
				p.Conn.packets = append(p.Conn.packets, p)
				if p.Type == TypeInitial {
					p.Conn.openInitial(p, r.FromClient)
				}
			}
			d.Packets = append(d.Packets, p)
		}
		a.Datagrams = append(a.Datagrams, d)
	}
	for _, c := range a.Conns {
		c.readHellos()
		c.openProtected(keys)
	}
	return a
}

// Summary says in a line what the capture held and how much of it could
// be read.
func (a *Analysis) Summary() string {
	var packets, opened, secrets int
	for _, d := range a.Datagrams {
		for _, p := range d.Packets {
			packets++
			if p.Opened {
				opened++
			}
		}
	}
	for _, c := range a.Conns {
		if c.Secrets {
			secrets++
		}
	}
	return fmt.Sprintf("%d datagrams, %d packets (%d decrypted), %d connections (%d with TLS secrets)",
		len(a.Datagrams), packets, opened, len(a.Conns), secrets)
}

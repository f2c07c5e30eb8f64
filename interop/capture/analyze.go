package capture

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"
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

// tracker finds the connection of each packet.
type tracker struct {
	byClientCID map[connKey]*Conn
	byFlow      map[netip.AddrPort][]*Conn
}

// connKey names a connection by its client's address and connection ID:
// a client that owns its socket may use a zero-length connection ID (as
// quic-go's does), which only the address then tells apart.
type connKey struct {
	client netip.AddrPort
	cid    string
}

func (t *tracker) assign(a *Analysis, p *Packet, r *Record) {
	switch {
	case p.Type == Type1RTT:
		p.Conn = t.shortHeaderConn(p, r)
	case r.FromClient:
		key := connKey{r.Client, string(p.SCID)}
		c := t.byClientCID[key]
		if c == nil && (p.Type == TypeInitial || p.Type == Type0RTT) {
			c = &Conn{Client: r.Client, ClientCID: bytes.Clone(p.SCID), keyDCID: bytes.Clone(p.DCID)}
			c.largest = [2][3]int64{{-1, -1, -1}, {-1, -1, -1}}
			t.byClientCID[key] = c
			t.byFlow[r.Client] = append(t.byFlow[r.Client], c)
			a.Conns = append(a.Conns, c)
		}
		p.Conn = c
	default:
		c := t.byClientCID[connKey{r.Client, string(p.DCID)}]
		p.Conn = c
		if c == nil {
			return
		}
		switch p.Type {
		case TypeInitial:
			if !slices.ContainsFunc(c.ServerCIDs, func(s []byte) bool { return bytes.Equal(s, p.SCID) }) {
				c.ServerCIDs = append(c.ServerCIDs, bytes.Clone(p.SCID))
			}
		case TypeRetry:
			c.RetrySCIDs = append(c.RetrySCIDs, bytes.Clone(p.SCID))
		}
	}
	if p.Conn != nil && p.Type != Type1RTT && p.Type != TypeRetry && p.Type != TypeVersionNegotiation {
		p.Conn.version = p.Version
	}
}

// shortHeaderConn finds the connection of a 1-RTT packet among those of
// its flow: the one whose connection ID it carries, or else the latest
// (an endpoint may switch to a connection ID issued in an encrypted
// frame); its packet number offset follows.
func (t *tracker) shortHeaderConn(p *Packet, r *Record) *Conn {
	conns := t.byFlow[r.Client]
	var found *Conn
	var cidLen int
	for _, c := range slices.Backward(conns) {
		cids := c.ServerCIDs
		if !r.FromClient {
			cids = [][]byte{c.ClientCID}
		}
		for _, cid := range cids {
			if len(p.raw.data) > len(cid) && bytes.Equal(p.raw.data[1:1+len(cid)], cid) {
				found, cidLen = c, len(cid)
				break
			}
		}
		if found != nil {
			break
		}
	}
	if found == nil && len(conns) > 0 {
		found = conns[len(conns)-1]
		if r.FromClient && len(found.ServerCIDs) > 0 {
			cidLen = len(found.ServerCIDs[0])
		} else if !r.FromClient {
			cidLen = len(found.ClientCID)
		} else {
			return nil
		}
	}
	if found != nil {
		p.DCID = p.raw.data[1 : 1+cidLen]
		p.raw.pnOffset = 1 + cidLen
	}
	return found
}

func dirOf(fromClient bool) int {
	if fromClient {
		return 0
	}
	return 1
}

// Packet number spaces.
const (
	spaceInitial = iota
	spaceHandshake
	spaceApp
)

// openInitial removes the Initial protection of p and feeds its CRYPTO
// frames to the handshake streams. The keys come from the connection ID
// the client's Initial packets were sent to before the server answered:
// the first one, or after a Retry the one the Retry named. Which one is
// learnt from the client's packets that open with it: with a corrupted
// first packet or several Retry packets (only one of which the client
// follows) the analysis cannot know it in advance.
func (c *Conn) openInitial(p *Packet, fromClient bool) {
	dir := dirOf(fromClient)
	candidates := [][]byte{c.keyDCID}
	if fromClient {
		candidates = append([][]byte{p.DCID}, candidates...)
		candidates = append(candidates, c.RetrySCIDs...)
	} else {
		candidates = append(candidates, c.strayDCIDs...)
	}
	for i, dcid := range candidates {
		prot, err := initialProtection(p.Version, dcid, fromClient)
		if err != nil {
			return
		}
		o, err := open(p.raw.data, p.raw.pnOffset, c.largest[dir][spaceInitial], prot.hp,
			func(int) []*protection { return []*protection{prot} })
		if err != nil {
			continue
		}
		switch {
		case fromClient:
			c.keyDCID, c.clientOpened = bytes.Clone(dcid), true
		case i > 0 || !c.clientOpened:
			p.Stray = true
		}
		c.took(p, o, dir, spaceInitial)
		return
	}
	if fromClient && len(c.strayDCIDs) < maxStray {
		c.strayDCIDs = append(c.strayDCIDs, bytes.Clone(p.DCID))
	}
}

// maxStray bounds the connection IDs of corrupted packets a connection
// keeps trying.
const maxStray = 16

// took records what an opened packet holds.
func (c *Conn) took(p *Packet, o opened, dir, space int) {
	p.HeaderOpened, p.Opened, p.PN, p.PayloadLen = true, true, o.pn, len(o.payload)
	p.payload = o.payload
	p.KeyPhase = o.keyPhase
	c.largest[dir][space] = max(c.largest[dir][space], int64(o.pn))
	f := walkFrames(o.payload)
	p.AckECN = f.ackECN
	for _, cf := range f.crypto {
		p.CryptoAtZero = p.CryptoAtZero || cf.offset == 0
		if space < spaceApp {
			c.crypto[dir][space].add(cf)
		}
	}
}

// readHellos parses the ClientHello and ServerHello from the Initial
// CRYPTO streams.
func (c *Conn) readHellos() {
	for _, m := range splitHandshake(c.crypto[0][spaceInitial].contiguous()) {
		if m.typ == msgClientHello && c.ClientHello == nil {
			c.ClientHello, _ = parseClientHello(m.body)
		}
	}
	for _, m := range splitHandshake(c.crypto[1][spaceInitial].contiguous()) {
		if m.typ == msgServerHello && c.ServerHello == nil {
			c.ServerHello, _ = parseServerHello(m.body)
		}
	}
}

// keyChain is the 1-RTT keys of one direction across key updates.
type keyChain struct {
	s       suite
	version uint32
	hp      headerProtection
	secrets [][]byte
	prots   []*protection
	current int
}

func (k *keyChain) gen(i int) *protection {
	if i < 0 {
		return nil
	}
	for len(k.secrets) <= i {
		k.secrets = append(k.secrets, nextSecret(k.s, k.version, k.secrets[len(k.secrets)-1]))
		k.prots = append(k.prots, nil)
	}
	if k.prots[i] == nil {
		k.prots[i], _ = newProtection(k.s, k.version, k.secrets[i])
	}
	return k.prots[i]
}

// candidates are the generations a packet with a key phase bit may use:
// the current one or the one before when the bit matches it, else the
// next (a key update) or the one before that.
func (k *keyChain) candidates(phase int) []int {
	if phase == k.current%2 {
		return []int{k.current, k.current - 2}
	}
	return []int{k.current + 1, k.current - 1}
}

// openProtected removes the protection of the connection's Handshake,
// 0-RTT and 1-RTT packets with the key log's secrets, in the order they
// were captured.
func (c *Conn) openProtected(keys KeyLog) {
	if c.ClientHello == nil {
		return
	}
	secret := func(label string) []byte { return keys.secret(c.ClientHello.Random, label) }
	c.Secrets = secret(labelClientTraffic) != nil || secret(labelClientHandshake) != nil
	if c.ServerHello == nil {
		return
	}
	s, err := suiteByID(c.ServerHello.CipherSuite)
	if err != nil {
		return
	}
	for _, p := range c.packets {
		dir := dirOf(p.FromClient)
		switch p.Type {
		case TypeHandshake:
			label := labelServerHandshake
			if p.FromClient {
				label = labelClientHandshake
			}
			c.openWith(p, dir, spaceHandshake, s, secret(label))
		case Type0RTT:
			c.openWith(p, dir, spaceApp, s, secret(labelClientEarly))
		case Type1RTT:
			c.open1RTT(p, dir, s, secret)
		}
	}
	c.readServerHandshake()
}

func (c *Conn) openWith(p *Packet, dir, space int, s suite, secret []byte) {
	if secret == nil {
		return
	}
	prot, err := newProtection(s, p.Version, secret)
	if err != nil {
		return
	}
	o, err := open(p.raw.data, p.raw.pnOffset, c.largest[dir][space], prot.hp,
		func(int) []*protection { return []*protection{prot} })
	if err == nil {
		c.took(p, o, dir, space)
	}
}

func (c *Conn) open1RTT(p *Packet, dir int, s suite, secret func(string) []byte) {
	k := c.oneRTT[dir]
	if k == nil {
		label := labelServerTraffic
		if dir == 0 {
			label = labelClientTraffic
		}
		first := secret(label)
		if first == nil {
			return
		}
		k = &keyChain{s: s, version: c.version, secrets: [][]byte{first}, prots: []*protection{nil}}
		if k.gen(0) == nil {
			return
		}
		k.hp = k.prots[0].hp
		c.oneRTT[dir] = k
	}
	var tried []int
	o, err := open(p.raw.data, p.raw.pnOffset, c.largest[dir][spaceApp], k.hp, func(phase int) []*protection {
		tried = k.candidates(phase)
		out := make([]*protection, len(tried))
		for i, g := range tried {
			out[i] = k.gen(g)
		}
		return out
	})
	if err != nil {
		if o.keyPhase >= 0 {
			p.HeaderOpened, p.KeyPhase = true, o.keyPhase
		}
		return
	}
	if g := tried[o.key]; g > k.current {
		k.current = g
	}
	c.took(p, o, dir, spaceApp)
}

// readServerHandshake reads the server's Handshake CRYPTO stream: its
// transport parameters and whether it sent a certificate.
func (c *Conn) readServerHandshake() {
	st := &c.crypto[1][spaceHandshake]
	c.ServerHandshakeCrypto = st.end
	for _, m := range splitHandshake(st.contiguous()) {
		switch m.typ {
		case msgEncryptedExtensions:
			if params, early, ok := encryptedExtensions(m.body); ok {
				c.ServerParams, c.ServerEarlyData = params, early
			}
		case msgCertificate:
			c.ServerCertificate = true
		}
	}
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

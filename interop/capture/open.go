package capture

import "bytes"

// Removing the protection of a connection's packets: Initial packets
// with the keys derived from a connection ID, the others with the key log's
// secrets, across key updates.

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

// minDatagram is the size of UDP payload every QUIC path carries (RFC
// 9000 section 14.1); a path MTU probe is larger.
const minDatagram = 1200

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
	p.AckECN, p.Padding = f.ackECN, f.padding
	p.PathChallenges, p.PathResponses = f.challenges, f.responses
	p.MTUProbe = p.Type == Type1RTT && f.complete && f.ping && !f.other && p.Size > minDatagram
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

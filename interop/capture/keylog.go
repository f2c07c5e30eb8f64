package capture

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"strings"
)

// Labels of the NSS key log format (as crypto/tls's KeyLogWriter, quic-go,
// GnuTLS and OpenSSL write it) that carry QUIC's secrets.
const (
	labelClientEarly     = "CLIENT_EARLY_TRAFFIC_SECRET"
	labelClientHandshake = "CLIENT_HANDSHAKE_TRAFFIC_SECRET"
	labelServerHandshake = "SERVER_HANDSHAKE_TRAFFIC_SECRET"
	labelClientTraffic   = "CLIENT_TRAFFIC_SECRET_0"
	labelServerTraffic   = "SERVER_TRAFFIC_SECRET_0"
)

// KeyLog holds the TLS secrets of a key log: by client random (in hex),
// then by label.
type KeyLog map[string]map[string][]byte

// ParseKeyLog reads key log files, joined. Lines it does not understand
// (comments, other labels, damage) are skipped: a key log is written by
// several programs and may end in the middle of a line.
func ParseKeyLog(data []byte) KeyLog {
	k := KeyLog{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || strings.HasPrefix(f[0], "#") {
			continue
		}
		random, err1 := hex.DecodeString(f[1])
		secret, err2 := hex.DecodeString(f[2])
		if err1 != nil || err2 != nil || len(random) != 32 {
			continue
		}
		key := hex.EncodeToString(random)
		if k[key] == nil {
			k[key] = map[string][]byte{}
		}
		k[key][f[0]] = secret
	}
	return k
}

// secret returns the secret of a label for the connection whose
// ClientHello had random.
func (k KeyLog) secret(random []byte, label string) []byte {
	if k == nil || random == nil {
		return nil
	}
	return k[hex.EncodeToString(random)][label]
}

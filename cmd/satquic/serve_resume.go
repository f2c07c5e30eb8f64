package main

import (
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/satquic/satquic/quic"
)

// A server's keys come from files of 64 hex digits (whitespace around them
// is ignored), so that they outlive a restart and the servers of a farm
// can share them; without a file each run draws its own. Make one with
// `openssl rand -hex 32 > FILE`.

// readKeyFile fills key from the file path named by --flag; false when
// path is empty.
func readKeyFile(flag, path string, key []byte) (bool, error) {
	if path == "" {
		return false, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("%w: --%s: %v", errUsage, flag, err)
	}
	text := strings.TrimSpace(string(b))
	// The length first: hex.Decode writes past a key too short for it.
	if len(text) != 2*len(key) {
		return false, fmt.Errorf("%w: --%s: %s does not hold %d hex digits", errUsage, flag, path, 2*len(key))
	}
	if _, err := hex.Decode(key, []byte(text)); err != nil {
		return false, fmt.Errorf("%w: --%s: %s does not hold %d hex digits", errUsage, flag, path, 2*len(key))
	}
	return true, nil
}

// readResumeKey reads serve's --resume-key, the key that seals Careful
// Resume's path states; nil without a file.
func readResumeKey(path string) (*quic.ResumeKey, error) {
	var key quic.ResumeKey
	if ok, err := readKeyFile("resume-key", path, key[:]); !ok {
		return nil, err
	}
	return &key, nil
}

// serverKeyFiles are the flags of the keys a server keeps across restarts
// and shares within a farm, besides --resume-key.
type serverKeyFiles struct {
	reset, token string
}

func (f *serverKeyFiles) register(fs *flag.FlagSet) {
	fs.StringVar(&f.reset, "reset-key", "", "file of 64 hex digits: the key of the stateless resets (RFC 9000 section 10.3), kept across restarts so that the clients of a server that restarted learn at once that their connections are gone, and shared by the servers of a farm (default: a random key per run)")
	fs.StringVar(&f.token, "token-key", "", "file of 64 hex digits: the key that seals address validation tokens (Retry, NEW_TOKEN), kept across restarts and shared by the servers of a farm so that the tokens one gave stay valid (default: a random key per run)")
}

// read reads --reset-key and --token-key; nil for each not given.
func (f serverKeyFiles) read() (*quic.StatelessResetKey, *quic.TokenKey, error) {
	var reset quic.StatelessResetKey
	var token quic.TokenKey
	hasReset, err := readKeyFile("reset-key", f.reset, reset[:])
	if err != nil {
		return nil, nil, err
	}
	hasToken, err := readKeyFile("token-key", f.token, token[:])
	if err != nil {
		return nil, nil, err
	}
	var r *quic.StatelessResetKey
	var t *quic.TokenKey
	if hasReset {
		r = &reset
	}
	if hasToken {
		t = &token
	}
	return r, t, nil
}

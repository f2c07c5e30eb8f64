package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/satquic/satquic/quic"
)

// readResumeKey reads serve's --resume-key: a file holding the key as 64
// hex digits (whitespace around them is ignored). No file: nil, a random
// key per run.
func readResumeKey(path string) (*quic.ResumeKey, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: --resume-key: %v", errUsage, err)
	}
	var key quic.ResumeKey
	text := strings.TrimSpace(string(b))
	if n, err := hex.Decode(key[:], []byte(text)); err != nil || n != len(key) || len(text) != 2*len(key) {
		return nil, fmt.Errorf("%w: --resume-key: %s does not hold %d hex digits", errUsage, path, 2*len(key))
	}
	return &key, nil
}

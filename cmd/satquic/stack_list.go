package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// stackList parses a comma-separated --stacks value of the bench commands
// that take it whole (bench bulk, bench load): each a known stack, each
// once, in the order given.
func stackList(list string, known []string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(known, s) {
			return nil, fmt.Errorf("unknown stack %q; available: %s", s, strings.Join(known, ", "))
		}
		if slices.Contains(out, s) {
			return nil, fmt.Errorf("stack %s given twice", s)
		}
		out = append(out, s)
	}
	return out, nil
}

// checkPeerProgram checks a --quicgo-peer path: "" (build it) or a file.
func checkPeerProgram(path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		return fmt.Errorf("--quicgo-peer %s is not a program", path)
	}
	return nil
}

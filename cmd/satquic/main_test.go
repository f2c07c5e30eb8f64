package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestHelpAndVersionGoToStdout: help that was asked for, in any of its
// spellings, and the version are the output of the command: stdout,
// status 0, nothing on stderr.
func TestHelpAndVersionGoToStdout(t *testing.T) {
	for _, args := range [][]string{
		{"--help"}, {"help"}, {"help", "get"}, {"get", "--help"}, {"get", "https://h/x", "-h"},
		{"serve", "-help"}, {"bench", "download", "--help"}, {"load", "--help"}, {"emulate", "--help"},
		{"sim", "--help"}, {"version"}, {"--version"},
	} {
		var stdout, stderr bytes.Buffer
		code := runMain(args, &stdout, &stderr)
		if code != 0 || stdout.Len() == 0 || stderr.Len() != 0 {
			t.Errorf("%q: status %d, %d bytes on stdout, stderr %q", args, code, stdout.Len(), stderr.String())
		}
		if args[len(args)-1] == "--version" && !strings.HasPrefix(stdout.String(), "satquic ") {
			t.Errorf("--version: %q", stdout.String())
		}
	}
}

package main

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dirNames lists a directory's entries, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// TestGetKeepsTheUsersFiles: whatever makes a download fail (a missing
// file, a wrong pin, no server), a file that -o names and that was there
// before stays as it was, and no partial file is left beside it.
func TestGetKeepsTheUsersFiles(t *testing.T) {
	dir := t.TempDir()
	serveMust(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("new a\n"), 0o644))
	addr, fp := startServe(t, dir)
	base := "https://" + addr
	// A port nothing listens on: bind one and close it.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	serveMust(t, err)
	dead := "https://" + pc.LocalAddr().String()
	serveMust(t, pc.Close())

	wrongPin := "0" + fp[1:] // the pin with its first digit changed
	if fp[0] == '0' {
		wrongPin = "1" + fp[1:]
	}
	failures := map[string][]string{
		"missing file": {base + "/missing", "--pin", fp},
		"wrong pin":    {base + "/a.txt", "--pin", wrongPin},
		"no server":    {dead + "/a.txt", "--pin", fp, "--handshake-timeout", "4s"},
	}
	for name, args := range failures {
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			mine := filepath.Join(out, "mine.txt")
			serveMust(t, os.WriteFile(mine, []byte("the user's own\n"), 0o600))
			_, stderr, err := runGetCmd(t, append(args, "-o", mine)...)
			if err == nil {
				t.Fatal("the download did not fail")
			}
			if name == "no server" && (!strings.Contains(err.Error(), "is a QUIC server listening on UDP port") || !strings.Contains(stderr, "no answer yet")) {
				t.Errorf("an unreachable server is not explained: %v; stderr %q", err, stderr)
			}
			if got, err := os.ReadFile(mine); err != nil || string(got) != "the user's own\n" {
				t.Errorf("the existing file now holds %q (%v)", got, err)
			}
			if names := dirNames(t, out); len(names) != 1 {
				t.Errorf("the directory holds %q, want only mine.txt", names)
			}
		})
	}

	t.Run("success replaces", func(t *testing.T) {
		out := t.TempDir()
		mine := filepath.Join(out, "mine.txt")
		serveMust(t, os.WriteFile(mine, []byte("old\n"), 0o600))
		if _, _, err := runGetCmd(t, base+"/a.txt", "--pin", fp, "-o", mine); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(mine); string(got) != "new a\n" {
			t.Errorf("the file holds %q after a successful download", got)
		}
		if names := dirNames(t, out); len(names) != 1 {
			t.Errorf("the directory holds %q, want only mine.txt", names)
		}
	})

	t.Run("directory created", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "new", "dir")
		serveMust(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644))
		if _, _, err := runGetCmd(t, base+"/a.txt", base+"/b.txt", "--pin", fp, "-o", out); err != nil {
			t.Fatal(err)
		}
		if names := dirNames(t, out); !slices.Equal(names, []string{"a.txt", "b.txt"}) {
			t.Errorf("the new directory holds %q", names)
		}
	})
}

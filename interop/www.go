//go:build linux

package interop

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// writeFiles creates the case's files in dir, each of random bytes under
// a random name of lowercase letters (as the runner names them), and
// returns the names in the order of the case's sizes.
func writeFiles(dir string, sizes []int, nameLen int) ([]string, error) {
	names := make([]string, 0, len(sizes))
	seen := map[string]bool{}
	for _, size := range sizes {
		name, err := randomName(nameLen)
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, fmt.Errorf("two files drew the name %s", name)
		}
		seen[name] = true
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		_, err = io.CopyN(f, rand.Reader, int64(size))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", name, err)
		}
		names = append(names, name)
	}
	return names, nil
}

func randomName(n int) (string, error) {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	for i := range b {
		k, err := rand.Int(rand.Reader, big.NewInt(int64(len(letters))))
		if err != nil {
			return "", err
		}
		b[i] = letters[k.Int64()]
	}
	return string(b), nil
}

// compareDownloads checks, as the runner does, that the client saved
// exactly the requested files in download, each equal to its original in
// www. It returns a short reason for the first problems it finds.
func compareDownloads(www, download string, names []string) error {
	entries, err := os.ReadDir(download)
	if err != nil {
		return fmt.Errorf("reading the downloads: %w", err)
	}
	var got []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			got = append(got, e.Name())
		}
	}
	var extra, missing []string
	for _, g := range got {
		if !slices.Contains(names, g) {
			extra = append(extra, g)
		}
	}
	for _, n := range names {
		if !slices.Contains(got, n) {
			missing = append(missing, n)
		}
	}
	var errs []error
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("%d of %d files missing (%s)", len(missing), len(names), sample(missing)))
	}
	if len(extra) > 0 {
		errs = append(errs, fmt.Errorf("%d unexpected files (%s)", len(extra), sample(extra)))
	}
	var bad []string
	for _, n := range names {
		if slices.Contains(missing, n) {
			continue
		}
		want, err1 := os.ReadFile(filepath.Join(www, n))
		have, err2 := os.ReadFile(filepath.Join(download, n))
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		if !bytes.Equal(want, have) {
			bad = append(bad, fmt.Sprintf("%s: %d bytes, want %d", short(n), len(have), len(want)))
		}
	}
	if len(bad) > 0 {
		errs = append(errs, fmt.Errorf("%d files differ from the originals (%s)", len(bad), sample(bad)))
	}
	return errors.Join(errs...)
}

// sample lists the first few of a list, for messages.
func sample(list []string) string {
	const most = 3
	out := make([]string, 0, most)
	for _, s := range list[:min(len(list), most)] {
		out = append(out, short(s))
	}
	if len(list) > most {
		out = append(out, "...")
	}
	return strings.Join(out, ", ")
}

// short shortens the 250-character names of zerortt.
func short(name string) string {
	if len(name) > 16 {
		return name[:12] + "..."
	}
	return name
}

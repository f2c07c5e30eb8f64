package archtest

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/satquic/satquic/"

// layers ranks the module's packages, bottom up: a package may import only
// packages of a lower rank (docs/architecture.md, "The parts"). A package
// takes the rank of the longest prefix listed; one that matches none fails
// the test, so that a new package is placed on purpose.
var layers = map[string]int{
	// Leaves.
	"internal/ecn": 0, "internal/varint": 0, "internal/inetsum": 0, "internal/report": 0, "internal/testkit": 0, "internal/archtest": 0,
	"bench/load/payload": 0, "bench/bulkproto": 0, "emulate/internal": 0,
	// The public congestion controller interface: the standard library
	// only, so that loss recovery can wrap what applications write.
	"quic/congestion": 0,
	// Codecs and models.
	"quic/internal/wire": 1, "quic/internal/crypto": 1, "quic/internal/dgram": 1, "quic/internal/udp": 1,
	"fec": 1, "netsim/loss": 1, "interop/capture": 1,
	"fec/baseline": 2, "netsim": 2, "quic/internal/recovery": 2,
	// CONNECT-IP needs only the standard library; its in-memory carrier
	// is above it.
	"connectip": 1, "connectip/connectiptest": 2,
	// The connection core and what drives it.
	"quic/internal/core": 3, "quic/internal/coresim": 3, "fec/fecsim": 3, "netsim/memnet": 3, "emulate": 3,
	"quic": 4, "quic/quicsim": 4,
	// Applications of QUIC.
	"http3": 5, "internal/hq": 5,
	"bench": 6, "bench/load": 6, "internal/testkit/h3test": 6, "interop": 6,
	// The tunnel's forwarding core, above HTTP/3 so that it may join a
	// request stream to a session.
	"tunnel":        6,
	"bench/loadcmp": 7,
	// The tunnel's two ends, joining HTTP/3, CONNECT-IP and the
	// forwarding core.
	"gateway": 7,
	// The tunnel experiment, which drives both ends of the tunnel.
	"bench/tunnelbench": 8,
	// Programs.
	"cmd": 9, "internal/cmd": 9,
}

// rank is the rank of the package at dir (relative to the module root).
func rank(dir string) (int, bool) {
	best, r := "", 0
	for prefix, v := range layers {
		if (dir == prefix || strings.HasPrefix(dir, prefix+"/")) && len(prefix) > len(best) {
			best, r = prefix, v
		}
	}
	return r, best != ""
}

// TestLayers checks every import of the module's non-test files against
// the layers: nothing imports a package above it (the core never imports
// the quic package, the codecs never the core, nothing but programs the
// experiments), and each package has a place.
func TestLayers(t *testing.T) {
	root := filepath.Join("..", "..")
	seen := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		seen++
		for _, p := range layerViolations(filepath.ToSlash(rel), path) {
			t.Error(p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("no files checked")
	}
}

// layerViolations lists the imports of the file at path, in package dir,
// that break the layers.
func layerViolations(dir, path string) []string {
	from, ok := rank(dir)
	if !ok {
		return []string{fmt.Sprintf("%s: package %s has no layer; add it to archtest's layers", path, dir)}
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		return []string{fmt.Sprintf("parse %s: %v", path, err)}
	}
	var out []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		target, ok := strings.CutPrefix(p, module)
		if !ok {
			continue
		}
		to, known := rank(target)
		if known && to >= from {
			out = append(out, fmt.Sprintf("%s: %s (layer %d) imports %s (layer %d): a package imports only those below it", path, dir, from, target, to))
		}
	}
	return out
}

// TestLayersCatchViolations makes sure the layer check can fail.
func TestLayersCatchViolations(t *testing.T) {
	if r, ok := rank("quic/internal/core"); !ok || r != 3 {
		t.Fatalf("rank of the core: %d, %v", r, ok)
	}
	if _, ok := rank("nowhere/new"); ok {
		t.Fatal("an unknown package has a layer")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "bad.go")
	if err := writeFile(src, "package core\nimport _ \""+module+"quic\"\n"); err != nil {
		t.Fatal(err)
	}
	if got := layerViolations("quic/internal/core", src); len(got) != 1 {
		t.Fatalf("the core importing quic: %q", got)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

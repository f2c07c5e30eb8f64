package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pureDirs are the directories (relative to the module root) whose
// non-test files must be pure: time is an argument, randomness is seeded.
// A directory that does not exist yet has no files and passes.
var pureDirs = []string{
	"fec",
	"fec/baseline",
	"netsim",
	"netsim/loss",
	"quic/internal/wire",
	"quic/internal/crypto",
	"quic/internal/core",
	"quic/internal/recovery",
	"quic/internal/dgram",
	"quic/internal/coresim",
	"quic/quicsim",
	"quic/congestion",
	"internal/ecn",
}

// forbiddenTimeFuncs read or wait on the wall clock.
var forbiddenTimeFuncs = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true,
}

func TestPurePackages(t *testing.T) {
	root := filepath.Join("..", "..")
	checked := 0
	for _, dir := range pureDirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			problems, err := violations(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Error(p)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no files checked: is the module layout still as pureDirs says?")
	}
}

// violations lists the architecture rules that the Go file at path (or src,
// when not nil: a string or []byte) breaks.
func violations(path string, src any) ([]string, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	var out []string
	timeName := ""
	for _, imp := range file.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		switch p {
		case "math/rand":
			out = append(out, fmt.Sprintf("%s: imports math/rand; use math/rand/v2 with an explicit seeded source", fset.Position(imp.Pos())))
		case "time":
			timeName = "time"
			if imp.Name != nil {
				timeName = imp.Name.Name
			}
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			out = append(out, fmt.Sprintf("%s: starts a goroutine; pure packages are driven by their caller", fset.Position(n.Pos())))
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && timeName != "" && id.Name == timeName && forbiddenTimeFuncs[n.Sel.Name] {
				out = append(out, fmt.Sprintf("%s: calls time.%s; pure packages take time as an argument", fset.Position(n.Pos()), n.Sel.Name))
			}
		}
		return true
	})
	return out, nil
}

// TestCheckerCatchesViolations makes sure the rules above can fail.
func TestCheckerCatchesViolations(t *testing.T) {
	src := "package bad\nimport (\n\t\"math/rand\"\n\tclock \"time\"\n)\n" +
		"func f() { go f(); _ = clock.Now(); _ = rand.Int(); _ = clock.Duration(1) }\n"
	got, err := violations("bad.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("got %d violations, want 3 (math/rand, go, time.Now): %q", len(got), got)
	}
}

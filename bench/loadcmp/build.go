package loadcmp

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// modulePath and peerPackage locate quic-go's load server in the source
// tree.
const (
	modulePath  = "github.com/satquic/satquic"
	peerPackage = "internal/cmd/quicgo-peer"
)

// BuildPeer builds the quicgo-peer program into dir with the Go toolchain,
// from the satquic source tree that contains the current directory, and
// returns its path. quic-go is a dependency of that program only.
func BuildPeer(dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("loadcmp: the quic-go server is built from source with the go command, which is not on PATH (or pass a built quicgo-peer)")
	}
	root, err := sourceRoot(goTool)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "quicgo-peer")
	cmd := exec.Command(goTool, "build", "-o", bin, "./"+peerPackage)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("loadcmp: building %s in %s: %w\n%s", peerPackage, root, err, strings.TrimSpace(string(out)))
	}
	return bin, nil
}

// sourceRoot is the root of the module the current directory is in, which
// must be satquic's.
func sourceRoot(goTool string) (string, error) {
	wd, _ := os.Getwd()
	out, err := exec.Command(goTool, "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("loadcmp: the quic-go server is built from satquic's source tree, and %s is not in a Go module: run from the source tree (or pass a built quicgo-peer)", wd)
	}
	root := filepath.Dir(gomod)
	mod, err := os.ReadFile(gomod)
	first, _, _ := strings.Cut(string(mod), "\n")
	if err != nil || strings.TrimSpace(first) != "module "+modulePath {
		return "", fmt.Errorf("loadcmp: %s is not satquic's module (%s): run from satquic's source tree (or pass a built quicgo-peer)", root, modulePath)
	}
	if _, err := os.Stat(filepath.Join(root, peerPackage)); err != nil {
		return "", fmt.Errorf("loadcmp: %s has no %s: %w", root, peerPackage, err)
	}
	return root, nil
}

// ModuleVersion reads the version of module path built into the program
// bin, or "" if it has none.
func ModuleVersion(bin, path string) string {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return ""
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}

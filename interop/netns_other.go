//go:build !linux

package interop

import (
	"errors"
	"runtime"

	"github.com/satquic/satquic/netsim"
)

func namespacesMissing() string {
	return "needs Linux network namespaces, the only emulator mode that carries ECN codepoints"
}

func newNamespaceNetwork(string, netsim.LinkConfig, netsim.LinkConfig) (network, error) {
	return nil, errors.New("no network namespaces on " + runtime.GOOS)
}

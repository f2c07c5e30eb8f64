//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/satquic/satquic/interop"
)

// satquic interop: the QUIC interop runner's test cases between satquic
// and its peers, in both roles, through the emulator; a matrix of the
// results.

func init() {
	register(command{
		name:    "interop",
		summary: "run the QUIC interop runner's test cases between satquic and its peers (quic-go, ngtcp2) through the emulator",
		run:     runInterop,
	})
}

const interopSynopsis = `interop [--cases LIST] [--peers LIST] [--json FILE] [--keep DIR] [--seed N] [--list]

Runs the QUIC interop runner's test cases (handshake, transfer, retry,
http3, ... as its testcases_quic.py defines them) between satquic and each
peer, satquic as client and as server, and between satquic and itself and
each peer and itself, each through the emulator's UDP relay with the
case's link (namespace mode, as root, for ecn). The checks read the
capture of what reached the server, decrypted with the endpoints' key
logs. Progress goes to stderr, the matrix to stdout. The exit status is 0
only when every case quic-go passes against itself passes with satquic
on either side of each pair, failures found to lie outside satquic
(marked fail*, and explained) excepted.

Peers: quic-go (built from internal/cmd/quicgo-peer with the go command,
so run it from the source tree) and ngtcp2 (the Debian packages
ngtcp2-client and ngtcp2-server).`

func runInterop(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return interopRun(ctx, args, stdout, stderr)
}

func interopRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var caseList, peerList, jsonOut, keep string
	var seed uint64
	var list bool
	fs := newFlagSet("interop", interopSynopsis, stderr)
	fs.StringVar(&caseList, "cases", "all", "comma-separated test cases (see --list)")
	fs.StringVar(&peerList, "peers", "all", "comma-separated peers: quic-go, ngtcp2")
	fs.StringVar(&jsonOut, "json", "", "also write the matrix as JSON to FILE")
	fs.StringVar(&keep, "keep", "", "keep each cell's files, downloads, key logs and peer logs under DIR")
	fs.Uint64Var(&seed, "seed", 0, "seed of the links' loss and corruption (0: a random one, printed)")
	fs.BoolVar(&list, "list", false, "list the test cases and exit")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if list {
		for _, c := range interop.Cases() {
			fmt.Fprintf(stdout, "%-20s %-4s %s\n", c.Name, c.Abbrev, c.Desc)
		}
		return nil
	}
	cases, err := interop.LookupCases(caseList)
	if err != nil {
		return fmt.Errorf("%w: --cases: %v", errUsage, err)
	}
	impls, err := interop.LookupImplementations(satquicAnd(peerList))
	if err != nil {
		return fmt.Errorf("%w: --peers: %v", errUsage, err)
	}
	if !flagWasSet(fs, "seed") || seed == 0 {
		seed = rand.Uint64()
	}
	fmt.Fprintf(stderr, "interop: %d cases, seed %d\n", len(cases), seed)
	// The emulator's packet threads each need a free P when the kernel
	// wakes them (see package emulate).
	runtime.GOMAXPROCS(max(16, runtime.NumCPU()))
	m, err := interop.Run(ctx, interop.Options{Cases: cases, Implementations: impls, Work: keep, Keep: keep != "",
		Seed: seed, Progress: stderr})
	if m == nil {
		return err
	}
	ok := m.Verdict()
	if werr := m.WriteTable(stdout); err == nil {
		err = werr
	}
	if jsonOut != "" {
		if jerr := m.WriteJSON(jsonOut); err == nil {
			err = jerr
		}
	}
	if err == nil && !ok {
		err = fmt.Errorf("%d required cells did not pass", len(m.Required))
	}
	return err
}

// satquicAnd is the list of implementations for --peers: satquic, then
// the peers named.
func satquicAnd(peers string) string {
	if peers == "" || peers == "all" {
		return "all"
	}
	return "satquic," + strings.TrimPrefix(peers, "satquic,")
}

// Command quicgo-peer runs quic-go (github.com/quic-go/quic-go) and its
// HTTP/3 package as a peer that satquic's experiments measure against.
//
// It is a program of its own so that quic-go never becomes a dependency
// of the satquic library or of the satquic binary: the bench package
// builds it with the Go toolchain when an experiment asks for the quic-go
// stack, and runs it inside the emulator's network namespaces.
//
// Usage:
//
//	quicgo-peer <subcommand> [flags]
//
// Each subcommand lives in a file of its own and registers itself from
// init; this file only dispatches. "quicgo-peer help" lists them.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// subcommand is one thing the peer can do.
type subcommand struct {
	name    string
	summary string
	// run gets the arguments after the subcommand's name. It writes its
	// results to stdout and diagnostics to stderr.
	run func(args []string, stdout, stderr io.Writer) error
}

var subcommands = map[string]subcommand{}

// register adds a subcommand; files call it from init.
func register(c subcommand) {
	if _, dup := subcommands[c.name]; dup {
		panic("quicgo-peer: subcommand registered twice: " + c.name)
	}
	subcommands[c.name] = c
}

// errUsage marks an error in the command line (exit status 2).
var errUsage = errors.New("usage")

func main() {
	err := dispatch(os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "quicgo-peer:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "quicgo-peer:", err)
		os.Exit(1)
	}
}

func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return fmt.Errorf("%w: name a subcommand", errUsage)
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return nil
	}
	c, ok := subcommands[args[0]]
	if !ok {
		return fmt.Errorf("%w: unknown subcommand %q (known: %s)", errUsage, args[0], strings.Join(names(), ", "))
	}
	if err := c.run(args[1:], stdout, stderr); !errors.Is(err, flag.ErrHelp) {
		return err
	}
	return nil
}

func names() []string {
	var out []string
	for n := range subcommands {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: quicgo-peer <subcommand> [flags]\n\nSubcommands:")
	for _, n := range names() {
		fmt.Fprintf(w, "  %-12s %s\n", n, subcommands[n].summary)
	}
	fmt.Fprintln(w, "\nRun \"quicgo-peer <subcommand> --help\" for its flags.")
}

// Command satquic is the one binary of the satquic project: the FEC
// simulator, the link emulator, the QUIC/HTTP/3 tools and the experiments
// are its subcommands. Run "satquic help" for the list.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// command is one subcommand. Each lives in a file of its own and adds itself
// to the table with register from an init function.
type command struct {
	name    string
	summary string
	// run receives the arguments after the subcommand name and the streams
	// to write to, so that commands can be tested without a process.
	run func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("satquic: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// errUsage marks an error caused by the command line; main exits with
// status 2 for it, as flag does.
var errUsage = errors.New("usage error")

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

func runMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				_ = c.run([]string{"--help"}, stdout, stdout)
				return 0
			}
		}
		usage(stdout)
		return 0
	case "--version", "-version":
		name, args = "version", args[:1]
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "satquic: unknown command %q\n\n", name)
		usage(stderr)
		return 2
	}
	if helpRequested(args[1:]) {
		// Asked-for help is the output, not a diagnostic: it goes to
		// stdout (and so through a pager), as "satquic help CMD" does.
		stderr = stdout
	}
	err := c.run(args[1:], stdout, stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "satquic %s: %v\n", name, err)
		return 2
	default:
		fmt.Fprintf(stderr, "satquic %s: %v\n", name, err)
		return 1
	}
}

// helpRequested reports a -h, -help or --help flag before any "--".
func helpRequested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--h", "--help":
			return true
		}
	}
	return false
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "satquic: QUIC, HTTP/3 and forward erasure correction for satellite and other long, lossy links.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: satquic <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %s%s  %s\n", n, strings.Repeat(" ", width-len(n)), commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run \"satquic <command> --help\" for the flags of a command, \"satquic --version\" for the version.")
}

// newFlagSet returns a FlagSet that reports errors instead of exiting and
// prints its usage, headed by the command's synopsis, to stderr.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("satquic "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: satquic %s\n\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and rejects positional arguments, which no
// command that uses it takes. A bad flag gives one line (main prints
// "satquic CMD: usage error: ...") rather than the whole usage; --help
// prints the usage.
func parseFlags(fs *flag.FlagSet, args []string) error {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage()
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}

// flagWasSet reports whether the command line set the named flag, for
// flags whose default depends on other flags.
func flagWasSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/satquic/satquic/bench"
	"github.com/satquic/satquic/netsim"
)

// satquic demo: the README's first command. The seed 000 experiment in
// virtual time: 1, 10 and 20 MB downloads over the seed-ifc path (50
// Mbit/s, 50 ms each way, 0.1% random loss): satquic with its defaults
// (BBR, FEC), without FEC, and as standard QUIC stacks run (CUBIC, no
// FEC), next to the physical limit. It needs neither root nor
// a network: both ends and the path run in the discrete-event simulator.

func init() {
	register(command{
		name:    "demo",
		summary: "satquic against standard QUIC: 1, 10 and 20 MB over a lossy in-flight link, in virtual time",
		run:     runDemo,
	})
}

const demoSynopsis = `demo [--runs N] [--seed S] [--profile P] [--plot FILE.png] [--json FILE] [--quiet]`

const demoExplanation = `Each row is %d downloads over a fresh simulated %s path (%s), each run
with its own seeded losses; times run from the client's first packet to the last
byte. "limit" is the physical floor: the handshake and request round trips plus the
size at the link rate. satquic-plain is QUIC as standard stacks run it (CUBIC, no FEC):
each random loss is retransmitted and cuts its sending rate by 30%%, so it rarely reaches
the link's capacity. satquic-nofec runs BBR, satquic's default controller, whose model of
the path does not slow down for random loss, but still waits a round trip to resend
each lost packet. satquic, with its defaults, also protects its packets with adaptive
forward erasure correction: the receiver rebuilds a lost packet from repair packets sent
alongside (a few percent of the traffic), and the sender never retransmits it and,
since no queue or ECN mark shows around these losses, does not slow down for it (the
default policy, "auto").
Real-time runs through the link emulator:
"sudo satquic bench download --stacks satquic,satquic-plain,quic-go,tcp-cubic".`

type demoOptions struct {
	runs     int
	seed     uint64
	profile  string
	plotFile string
	jsonFile string
	quiet    bool
	args     []string
}

func runDemo(args []string, stdout, stderr io.Writer) error {
	o := demoOptions{args: args}
	fs := newFlagSet("demo", demoSynopsis, stderr)
	fs.IntVar(&o.runs, "runs", 10, "downloads per stack and size")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the simulated losses")
	fs.StringVar(&o.profile, "profile", "seed-ifc", "network profile ("+strings.Join(netsim.ProfileNames(), ", ")+")")
	fs.StringVar(&o.plotFile, "plot", "satquic-demo.png", "draw the completion times to `FILE.png` (empty: no plot)")
	fs.StringVar(&o.jsonFile, "json", "", "also write the results and every run to `FILE` as JSON")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.runs < 1 {
		return usageErr("--runs %d, want at least 1", o.runs)
	}
	if o.plotFile != "" && !plotToFile(o.plotFile) {
		return usageErr("--plot %s: want a file name ending in .png", o.plotFile)
	}
	prof, err := netsim.LookupProfile(o.profile)
	if err != nil {
		return usageErr("%v", err)
	}
	return o.run(prof, stdout, stderr)
}

func (o *demoOptions) run(prof netsim.Profile, stdout, stderr io.Writer) error {
	var stacks []bench.Stack
	for _, name := range []string{"satquic", "satquic-nofec", "satquic-plain"} {
		st, err := bench.LookupStack(name)
		if err != nil {
			return err
		}
		stacks = append(stacks, st)
	}
	cfg := bench.DownloadConfig{
		Profile: prof,
		Sizes:   []int64{1_000_000, 10_000_000, 20_000_000},
		Runs:    o.runs,
		Seed:    o.seed,
		Stacks:  stacks,
		Virtual: true,
	}
	if !o.quiet {
		cfg.Progress = stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	out, err := bench.RunDownload(ctx, cfg)
	if err != nil {
		return err
	}
	doc := bench.NewDocument(bench.NewMetadata(cfg, version(), append([]string{"satquic", "demo"}, o.args...)), out)
	if err := doc.WriteText(stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n"+demoExplanation+"\n", o.runs, prof.Name, prof.Description)
	if o.plotFile != "" {
		g, err := doc.Figure()
		if err == nil {
			err = g.SavePNG(o.plotFile)
		}
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		fmt.Fprintf(stdout, "\nPlot: %s\n", o.plotFile)
	}
	return writeOutput(o.jsonFile, doc.WriteJSON)
}

//go:build linux

package main

import "github.com/satquic/satquic/bench"

// bench resume (seed 003): bench download's machinery over the stacks of
// a returning client (package bench, resume.go).

const benchResumeSynopsis = `bench resume [--profile geo] [--sizes 500kB,1MB,10MB] [--runs N] [--seed S]
       [--stacks S1,S2,...] [--virtual] [--json FILE] [--csv FILE] [--plot FILE.png|DIR]

Measures what a returning client gains (seed 003): download completion
time from the start of the connection that carries the download to its
last byte, for a new connection (satquic-cold, quic-go-cold) and for a
second connection that resumes the session of a first, untimed one of the
same size and sends its request in 0-RTT (satquic-0rtt, quic-go-0rtt; the
satquic server listens early and answers in 0.5-RTT). The limit of a
0-RTT stack counts one round trip, that of a cold one two. Real time runs
through the emulated profile in two network namespaces (root); --virtual
runs the satquic stacks over the simulator. Run it with --profile geo and
--profile geo-interop for the seed's two paths. The other flags are bench
download's. satquic-resume (0-RTT with Careful Resume and the BDP frame)
is not in this build.`

var benchResume = downloadExperiment{
	name: "resume", synopsis: benchResumeSynopsis, profile: "geo", sizes: "500kB,1MB,10MB", runs: 20,
	realStacks: bench.ResumeRealTimeStacks, virtualStacks: bench.ResumeVirtualStacks,
}

//go:build linux

package main

import "github.com/satquic/satquic/bench"

// bench resume (seed 003): bench download's machinery over the stacks of
// a returning client (package bench, resume.go).

const benchResumeSynopsis = `bench resume [--profile geo] [--sizes 500kB,1MB,10MB] [--runs N] [--seed S]
       [--stacks S1,S2,...] [--cc C] [--virtual] [--json FILE] [--csv FILE] [--plot FILE.png|DIR]

Measures what a returning client gains (seed 003): download completion
time from the start of the connection that carries the download to its
last byte, for a new connection (satquic-cold, quic-go-cold) and for a
second connection that resumes the session of a first, untimed one and
sends its request in 0-RTT (satquic-0rtt, quic-go-0rtt: the first
connection downloads the same size; the satquic server listens early and
answers in 0.5-RTT). satquic-resume adds Careful Resume (RFC 9959) with
the BDP frame: its first connection downloads three bandwidth-delay
products of the profile (or the timed size if larger: 12.2 MB on geo,
4.5 MB on geo-interop), so that the server measures the path, and hands
the client its sealed path state; the timed connection returns it in 0-RTT
and the server resumes from it; satquic-0rtt runs without Careful Resume.
The limit of a 0-RTT stack counts one round trip, that of a cold one two.
Real time runs through the emulated profile in two network namespaces
(root); --virtual runs the satquic stacks over the simulator. Run it with
--profile geo and --profile geo-interop for the seed's two paths. --cc
sets the satquic stacks' controller; the other flags are bench
download's.`

var benchResume = downloadExperiment{
	name: "resume", synopsis: benchResumeSynopsis, profile: "geo", sizes: "500kB,1MB,10MB", runs: 20,
	realStacks: bench.ResumeRealTimeStacks, virtualStacks: bench.ResumeVirtualStacks,
}

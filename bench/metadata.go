package bench

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/satquic/satquic/netsim"
)

// Metadata is what a result needs to be reproduced and judged: the
// software, the experiment's parameters, the path and the machine.
type Metadata struct {
	Experiment string `json:"experiment"`
	// Command is the command line, as typed.
	Command        []string     `json:"command,omitempty"`
	SatquicVersion string       `json:"satquic_version"`
	GoVersion      string       `json:"go_version"`
	Dependencies   []string     `json:"dependencies,omitempty"`
	Date           string       `json:"date"`
	Seed           uint64       `json:"seed"`
	Runs           int          `json:"runs"`
	SizesBytes     []int64      `json:"sizes_bytes"`
	Stacks         []StackInfo  `json:"stacks"`
	Profile        ProfileInfo  `json:"profile"`
	Machine        MachineInfo  `json:"machine"`
	Emulator       EmulatorInfo `json:"emulator"`
	// TimeoutS bounds each download; 0 means the default, 30 s plus 20
	// times the download's limit.
	TimeoutS float64 `json:"timeout_s"`
}

// StackInfo is a stack as the experiment used it.
type StackInfo struct {
	Name          string `json:"name"`
	HandshakeRTTs int    `json:"handshake_rtts"`
	LimitFormula  string `json:"limit_formula"`
	// CongestionControl is the controller of a stack that lets it be
	// chosen (CongestionControlled); empty for the others.
	CongestionControl string `json:"cc,omitempty"`
}

// ProfileInfo is a network profile with its parameters.
type ProfileInfo struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	RTTMs       float64  `json:"rtt_ms"`
	BDPBytes    int      `json:"bdp_bytes"`
	Down        LinkInfo `json:"down"`
	Up          LinkInfo `json:"up"`
	// SeedRule says how each run's link seeds follow from the
	// experiment's seed.
	SeedRule string `json:"seed_rule"`
}

// LinkInfo is one direction's parameters; durations are in milliseconds.
type LinkInfo struct {
	RateBps      float64            `json:"rate_bps"`
	DelayMs      float64            `json:"delay_ms"`
	JitterMs     float64            `json:"jitter_ms,omitempty"`
	Loss         string             `json:"loss"`
	QueueBytes   int                `json:"queue_bytes"`
	QueuePackets int                `json:"queue_packets,omitempty"`
	MTU          int                `json:"mtu,omitempty"`
	Trace        bool               `json:"trace,omitempty"`
	RateSchedule []netsim.RateStep  `json:"rate_schedule_ns,omitempty"`
	Outages      []netsim.Outage    `json:"outages_ns,omitempty"`
	DelaySteps   []netsim.DelayStep `json:"delay_steps_ns,omitempty"`
	Duplicate    float64            `json:"duplicate,omitempty"`
	Corrupt      float64            `json:"corrupt,omitempty"`
	Reorder      bool               `json:"reorder,omitempty"`
}

// MachineInfo describes the machine the experiment ran on.
type MachineInfo struct {
	CPUModel   string `json:"cpu_model"`
	Cores      int    `json:"cores"`
	Kernel     string `json:"kernel"`
	OSArch     string `json:"os_arch"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

// EmulatorInfo is how the emulator ran.
type EmulatorInfo struct {
	Mode string `json:"mode"`
	// HighPriority reports that its packet threads ran at high priority
	// in every run.
	HighPriority bool `json:"high_priority"`
	// LatePackets counts packets sent more than emulate.LateThreshold
	// after their due time, over all runs.
	LatePackets uint64 `json:"late_packets"`
}

// NewMetadata describes an experiment run now, on this machine.
func NewMetadata(cfg DownloadConfig, version string, args []string) Metadata {
	m := Metadata{
		Experiment:     "download",
		Command:        args,
		SatquicVersion: version,
		GoVersion:      runtime.Version(),
		Dependencies:   dependencies(),
		Date:           time.Now().UTC().Format(time.RFC3339),
		Seed:           cfg.Seed,
		Runs:           cfg.Runs,
		SizesBytes:     cfg.Sizes,
		Profile:        profileInfo(cfg.Profile),
		Machine:        Machine(),
		Emulator:       EmulatorInfo{Mode: "netns"},
		TimeoutS:       cfg.Timeout.Seconds(),
	}
	for _, s := range cfg.Stacks {
		info := StackInfo{
			Name: s.Name(), HandshakeRTTs: s.HandshakeRTTs(),
			LimitFormula: LimitFormula(cfg.Profile, s.HandshakeRTTs()),
		}
		if c, ok := s.(CongestionControlled); ok {
			info.CongestionControl = c.CongestionControl()
		}
		m.Stacks = append(m.Stacks, info)
	}
	return m
}

func profileInfo(p netsim.Profile) ProfileInfo {
	return ProfileInfo{
		Name: p.Name, Description: p.Description,
		RTTMs: ms(p.RTT()), BDPBytes: p.BDPBytes(),
		Down: linkInfo(p.Down), Up: linkInfo(p.Up),
		SeedRule: "run r (from 1) seeds the downlink with netsim.DeriveSeed(seed, r) and the uplink as netsim.Profile.WithSeed does",
	}
}

func linkInfo(c netsim.LinkConfig) LinkInfo {
	loss := c.Loss
	if loss == "" {
		loss = "none"
	}
	return LinkInfo{
		RateBps: c.PeakRateBps(), DelayMs: ms(c.Delay), JitterMs: ms(c.Jitter), Loss: loss,
		QueueBytes: c.EffectiveQueueBytes(), QueuePackets: c.QueuePackets, MTU: c.MTU,
		Trace: c.Trace != nil, RateSchedule: c.RateSchedule, Outages: c.Outages, DelaySteps: c.DelaySteps,
		Duplicate: c.Duplicate, Corrupt: c.Corrupt, Reorder: c.Reorder,
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// dependencies lists the modules built into the binary, as path@version.
func dependencies() []string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	var deps []string
	for _, d := range bi.Deps {
		deps = append(deps, d.Path+"@"+d.Version)
	}
	return deps
}

// Machine describes this machine.
func Machine() MachineInfo {
	m := MachineInfo{
		CPUModel:   cpuModel(),
		Cores:      runtime.NumCPU(),
		OSArch:     runtime.GOOS + "/" + runtime.GOARCH,
		GOMAXPROCS: runtime.GOMAXPROCS(0),
	}
	m.Kernel = kernelVersion()
	return m
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "unknown".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/quicsim"
)

// VirtualDownload is one download in virtual time and what the simulated
// path did to it.
type VirtualDownload struct {
	Download
	// Up and Down are the simulated links' counters.
	Up, Down netsim.LinkStats
}

// virtualOnce measures one download of a VirtualStack over the simulator.
// The path is the profile seeded as in real time (RunSeed), and the
// stack's own randomness is seeded from the same run seed, so that a run is
// reproducible from the experiment's seed. The timeout bounds simulated
// time; the context only interrupts between runs, since a run takes a
// fraction of a second of CPU.
func virtualOnce(ctx context.Context, cfg DownloadConfig, rec RunRecord, st VirtualStack, limit time.Duration) (RunRecord, error) {
	if err := ctx.Err(); err != nil {
		return rec, fmt.Errorf("interrupted: %w", context.Cause(ctx))
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		// Simulated time costs events, not seconds: a generous bound
		// lets a loss-based controller crawl through a lossy GEO path
		// (CUBIC at 1% loss and 600 ms moves about a Mbit/s), and
		// still ends a connection that stopped making progress.
		timeout = 10*time.Minute + 100*limit
	}
	d, err := st.DownloadVirtual(ctx, cfg.Profile.WithSeed(rec.Seed), rec.Seed, rec.SizeBytes, timeout)
	if errors.Is(err, netsim.ErrLimit) {
		return rec.timedOut(timeout, d.Detail), nil
	}
	if err != nil {
		return rec, err
	}
	if d.Bytes != rec.SizeBytes {
		return rec, fmt.Errorf("received %d bytes, want %d", d.Bytes, rec.SizeBytes)
	}
	rec.Seconds = d.Elapsed.Seconds()
	rec.GoodputMbps = Goodput(rec.SizeBytes, rec.Seconds)
	rec.Detail = d.Detail
	rec.DownLost, rec.UpLost = d.Down.DroppedLoss, d.Up.DroppedLoss
	rec.QueueDrops = d.Down.DroppedQueue + d.Up.DroppedQueue
	rec.UpBytes, rec.DownBytes = d.Up.OfferedBytes, d.Down.OfferedBytes
	return rec, nil
}

// DownloadVirtual runs the satquic stack's download over the simulator:
// the QUIC core of package quic driven in virtual time by netsim's event
// loop (package quic/quicsim), with the configuration of the real-time
// stack (its controller, 1452-byte datagrams) and the same hq-interop
// request.
// No goroutine, socket or clock is involved, so the result is a function
// of the seed.
func (s *satquicStack) DownloadVirtual(_ context.Context, p netsim.Profile, seed uint64, size int64, limit time.Duration) (VirtualDownload, error) {
	r, err := quicsim.Download(quicsim.DownloadConfig{
		Profile:           p,
		Seed:              seed,
		Size:              size,
		CongestionControl: s.CongestionControl(),
		MaxDatagramSize:   satquicMaxDatagram,
		Limit:             limit,
		FEC:               s.fec,
		FECPolicy:         s.fecPolicy,
		ZeroRTT:           s.zeroRTT,
		CarefulResume:     s.carefulResume,
	})
	if err != nil {
		return VirtualDownload{}, fmt.Errorf("%s: %w", s.name, err)
	}
	d := VirtualDownload{
		Download: Download{
			Elapsed: r.Elapsed,
			Bytes:   r.Bytes,
			Detail: fmt.Sprintf("cc=%s virtual handshake=%v server_lost=%d retransmitted=%d spurious=%d ptos=%d fec_repairs=%d client_recovered=%d uplink_ratio=%.4f%% ack_freq_packets_per_ack=%d",
				s.CongestionControl(), r.Handshake.Round(time.Millisecond), r.ServerPacketsLost, r.ServerRetransmitted, r.ServerSpurious, r.ServerPTOs,
				r.FEC.RepairsSent, r.ClientRecovered, 100*r.UplinkRatio(), r.AckFrequency.PacketsPerAck),
		},
		Up:   r.Up,
		Down: r.Down,
	}
	if s.carefulResume {
		cr := r.CarefulResume
		d.Detail += fmt.Sprintf(" cr_saved=%dB/%v cr_phase=%s cr_unvalidated=%d cr_retreats=%d cr_window_sufficed=%d",
			cr.Resumed.SavedCwnd, cr.Resumed.SavedRTT.Round(time.Millisecond), cr.Phase, r.ServerRecovery.ResumeUnvalidated,
			r.ServerRecovery.ResumeSafeRetreat, cr.WindowSufficed)
	}
	return d, nil
}

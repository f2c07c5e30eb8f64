package quicsim

import (
	"testing"

	"github.com/satquic/satquic/netsim"
)

// downloadBoth runs the same download with and without the ACK frequency
// extension.
func downloadBoth(t *testing.T, profile string, seed uint64, size int64, fec bool) (on, off Result) {
	t.Helper()
	p, err := netsim.LookupProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DownloadConfig{Profile: p.WithSeed(seed), Seed: seed, Size: size, MaxDatagramSize: 1452, FEC: fec}
	if on, err = Download(cfg); err != nil {
		t.Fatal(err)
	}
	cfg.NoAckFrequency = true
	if off, err = Download(cfg); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s %d MB: with ACK frequency %v, uplink %d packets, %d B (%.3f%%), request %+v; without %v, %d packets, %d B (%.3f%%)",
		profile, size/1e6, on.Elapsed, on.Up.Offered, on.Up.OfferedBytes, 100*on.UplinkRatio(), on.AckFrequency,
		off.Elapsed, off.Up.Offered, off.Up.OfferedBytes, 100*off.UplinkRatio())
	return on, off
}

// TestDownloadAckFrequencyUplink: on geo-large (250/3 Mbit/s) the server
// asks the client for one ACK per about 200 packets once slow start
// ended; 100 MB then cost the 3 Mbit/s uplink under 0.1% of the bytes
// sent down (the target is 1%), fewer than the client's own
// thinning (ackrate.go), and no time.
func TestDownloadAckFrequencyUplink(t *testing.T) {
	if testing.Short() {
		t.Skip("a 100 MB download")
	}
	on, off := downloadBoth(t, "geo-large", 1, 100e6, false)
	if r := on.UplinkRatio(); r > 0.001 || r >= off.UplinkRatio() {
		t.Errorf("uplink ratio %.4f%%, without ACK frequency %.4f%%", 100*r, 100*off.UplinkRatio())
	}
	if on.Elapsed > off.Elapsed {
		t.Errorf("%v with ACK frequency, %v without", on.Elapsed, off.Elapsed)
	}
	// The request, and IMMEDIATE_ACK with the last data.
	if af := on.AckFrequency; !af.PeerOffered || af.FramesSent == 0 || af.PacketsPerAck < 128 || af.ImmediateAcksSent == 0 {
		t.Errorf("server's requests %+v", af)
	}
	if off.AckFrequency.Offered || off.AckFrequency.FramesSent != 0 {
		t.Errorf("frames without the extension: %+v", off.AckFrequency)
	}
}

// TestDownloadAckFrequencyFEC: FEC's repairs and its feedback keep working
// under thinned ACKs on geo-lossy (1% loss): the client rebuilds as many
// packets, the server retransmits no more of them spuriously (a rebuilt
// packet is reported at once, receive_frames.go), and the download takes
// no longer, with fewer bytes up.
func TestDownloadAckFrequencyFEC(t *testing.T) {
	if testing.Short() {
		t.Skip("a 100 MB download")
	}
	on, off := downloadBoth(t, "geo-lossy", 2, 100e6, true)
	if on.AckFrequency.FramesSent == 0 {
		t.Fatalf("no request: %+v", on.AckFrequency)
	}
	if on.ClientRecovered < off.ClientRecovered*9/10 || on.ClientRecovered == 0 {
		t.Errorf("client rebuilt %d packets, %d without ACK frequency", on.ClientRecovered, off.ClientRecovered)
	}
	if on.ServerSpurious > off.ServerSpurious {
		t.Errorf("%d spurious retransmissions, %d without ACK frequency", on.ServerSpurious, off.ServerSpurious)
	}
	if on.Elapsed > off.Elapsed*101/100 || on.UplinkRatio() >= off.UplinkRatio() {
		t.Errorf("%v and %.3f%% up with ACK frequency, %v and %.3f%% without", on.Elapsed, 100*on.UplinkRatio(), off.Elapsed, 100*off.UplinkRatio())
	}
}

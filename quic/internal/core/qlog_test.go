package core

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

type qlogEvent struct {
	Time float64        `json:"time"`
	Name string         `json:"name"`
	Data map[string]any `json:"data"`
}

// parseQlog splits JSON-SEQ output into its header and events, failing on
// any record that is not 0x1E, a JSON object and a newline (RFC 7464).
func parseQlog(t *testing.T, out []byte) (map[string]any, []qlogEvent) {
	t.Helper()
	if len(out) == 0 || out[0] != qlogRecordSeparator {
		t.Fatal("qlog does not start with a record separator")
	}
	recs := bytes.Split(out[1:], []byte{qlogRecordSeparator})
	var header map[string]any
	if err := json.Unmarshal(recs[0], &header); err != nil {
		t.Fatalf("header: %v", err)
	}
	var evs []qlogEvent
	for i, r := range recs {
		if len(r) == 0 || r[len(r)-1] != '\n' {
			t.Fatalf("record %d does not end with a newline", i)
		}
		if i == 0 {
			continue
		}
		var ev qlogEvent
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ev); err != nil {
			t.Fatalf("record %d: %v: %s", i, err, r)
		}
		evs = append(evs, ev)
	}
	return header, evs
}

// TestQlog: both ends write a JSON-SEQ qlog during a download that loses
// a datagram; the header names the format and schema qvis reads, and the
// events match the connection's counters.
func TestQlog(t *testing.T) {
	ccfg, scfg := testConfigs(t, 130)
	var cq, sq bytes.Buffer
	ccfg.Qlog, scfg.Qlog = &cq, &sq
	p := newPair(t, ccfg, scfg, 20*time.Millisecond)
	p.drop = func(toServer bool, n int, _ []byte) bool { return !toServer && n == 8 }
	d := newDownload(t, 60_000)
	p.serverApp = d.server
	cl := d.client(nil)
	p.clientApp = func(now time.Duration, c *Conn) {
		if !d.haveID {
			for _, ev := range p.clientEvents {
				if ev.Kind == EventStreamOpened {
					d.clientID, d.haveID = ev.StreamID, true
				}
			}
		}
		cl(p.now, c)
	}
	p.mustRun(func() bool { return d.done && p.confirmed() }, 10*time.Second)
	start := p.server.qlog.start

	for _, side := range []struct {
		name  string
		c     *Conn
		out   []byte
		vp    string
		start time.Duration
	}{{"client", p.client, cq.Bytes(), "client", 0}, {"server", p.server, sq.Bytes(), "server", start}} {
		header, evs := parseQlog(t, side.out)
		trace, _ := header["trace"].(map[string]any)
		vp, _ := trace["vantage_point"].(map[string]any)
		common, _ := trace["common_fields"].(map[string]any)
		if header["qlog_format"] != "JSON-SEQ" || header["file_schema"] != qlogFileSchema || vp["type"] != side.vp {
			t.Errorf("%s header %v", side.name, header)
		}
		if common["ODCID"] != hex.EncodeToString(side.c.origDCID.Bytes()) {
			t.Errorf("%s ODCID %v, want %x", side.name, common["ODCID"], side.c.origDCID.Bytes())
		}
		count := map[string]uint64{}
		last := -1.0
		for _, ev := range evs {
			count[ev.Name]++
			if ev.Time < last {
				t.Fatalf("%s: time went back from %v to %v", side.name, last, ev.Time)
			}
			last = ev.Time
		}
		st := side.c.Stats()
		if count["transport:packet_sent"] != st.PacketsSent || count["transport:packet_received"] != st.PacketsReceived {
			t.Errorf("%s: %d packet_sent, %d packet_received; stats %d, %d", side.name, count["transport:packet_sent"], count["transport:packet_received"], st.PacketsSent, st.PacketsReceived)
		}
		if count["recovery:packet_lost"] != st.PacketsLost || count["recovery:metrics_updated"] == 0 {
			t.Errorf("%s: %d packet_lost (stats %d), %d metrics_updated", side.name, count["recovery:packet_lost"], st.PacketsLost, count["recovery:metrics_updated"])
		}
		// The last event is at the end of the run, in ms since the
		// connection started.
		if want := float64(p.now-side.start) / float64(time.Millisecond); last > want {
			t.Errorf("%s: last event at %v ms, after the end %v ms", side.name, last, want)
		}
	}
	if p.server.Stats().PacketsLost == 0 {
		t.Fatal("the dropped datagram was not declared lost")
	}
	// A STREAM frame is logged with its stream, offset and length.
	_, evs := parseQlog(t, sq.Bytes())
	found := false
	for _, ev := range evs {
		frames, _ := ev.Data["frames"].([]any)
		for _, f := range frames {
			m, _ := f.(map[string]any)
			if m["frame_type"] == "stream" && m["stream_id"] != nil && m["length"] != nil && m["offset"] != nil {
				found = true
			}
		}
	}
	if !found {
		t.Error("no STREAM frame in the server's qlog")
	}
}

// TestQlogWriterError: a failing writer ends the qlog, not the connection.
func TestQlogWriterError(t *testing.T) {
	ccfg, scfg := testConfigs(t, 131)
	ccfg.Qlog = failingWriter{}
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	if !p.client.qlog.off() {
		t.Error("qlog still on after a write error")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

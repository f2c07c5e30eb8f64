package core

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/congestion"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// phased is a fixed-window controller whose phase is the number of ACKs
// it has seen, in tens, under a name that JSON must escape.
type phased struct{ acks int }

func (p *phased) OnPacketSent(time.Duration, int, int64)                       {}
func (p *phased) OnAck(time.Duration, *congestion.AckEvent)                    { p.acks++ }
func (p *phased) OnCongestionEvent(time.Duration, *congestion.CongestionEvent) {}
func (p *phased) Window() int                                                  { return 64 << 10 }
func (p *phased) PacingRate(congestion.RTT) uint64                             { return 0 }
func (p *phased) InSlowStart() bool                                            { return false }
func (p *phased) SetMaxDatagramSize(int)                                       {}
func (p *phased) State() congestion.State {
	return congestion.State{Name: "fixed", Phase: "acks \"" + string(rune('0'+min(p.acks/10, 9))) + "0\"\n"}
}

// A custom controller's phases reach qlog's congestion_state_updated as it
// names them, escaped into valid JSON, and Stats names the controller.
func TestCustomControllerQlog(t *testing.T) {
	ccfg, scfg := testConfigs(t, 62)
	var sq bytes.Buffer
	scfg.Qlog = &sq
	scfg.Recovery.Custom = &recovery.CustomController{New: func() congestion.Controller { return &phased{} }}
	sp, _ := runDownload(t, profile(t, "p2p"), 300_000, ccfg, scfg, 30*time.Second)
	_, evs := parseQlog(t, sq.Bytes())
	var news []string
	for _, ev := range evs {
		if ev.Name == "recovery:congestion_state_updated" {
			s, _ := ev.Data["new"].(string)
			news = append(news, s)
		}
	}
	if len(news) < 3 || news[0] != "acks \"00\"\n" || news[1] != "acks \"10\"\n" {
		t.Errorf("congestion states %q, want the controller's own, from acks \"00\"", news)
	}
	st := sp.server.conn.Stats().Controller
	if st.AlgorithmName() != "fixed" || st.Window != 64<<10 {
		t.Errorf("server controller %q, window %d", st.AlgorithmName(), st.Window)
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "slow_start", "a\"b\\c", "tab\there\x01\x1f", "bad \xff utf-8", "ünïcødé"} {
		b := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Errorf("%q: %s is not JSON: %v", s, b, err)
			continue
		}
		want := string(bytes.ToValidUTF8([]byte(s), []byte("\uFFFD")))
		if got != want {
			t.Errorf("%q: %s reads back as %q", s, b, got)
		}
	}
}

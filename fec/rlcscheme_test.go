package fec

import (
	"bytes"
	"errors"
	"testing"
)

func TestRLCEncoderFollowsItsController(t *testing.T) {
	ctl, err := NewFixedController(FixedConfig{Sources: 4, Repairs: 2, Window: 3})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := NewRLCEncoder(RLCConfig{Controller: ctl, MaxWindow: 16})
	if err != nil {
		t.Fatal(err)
	}
	dec, err := NewDecoder(DecoderConfig{MaxWindow: 16})
	if err != nil {
		t.Fatal(err)
	}
	payloads := [][]byte{[]byte("a"), []byte("bb"), []byte("ccc"), []byte(""), []byte("eeeee"), []byte("ff")}
	var got []Recovered
	for i, p := range payloads {
		repairs := enc.AddSource(p)
		wantRepairs := i % 2 // after the 2nd, 4th, 6th source
		if len(repairs) != wantRepairs {
			t.Fatalf("source %d: %d repairs, want %d", i, len(repairs), wantRepairs)
		}
		// Sources 1 and 2 are lost.
		if i != 1 && i != 2 {
			for _, r := range dec.AddSource(uint32(i), p) {
				got = append(got, Recovered{ESI: r.ESI, Data: bytes.Clone(r.Data)})
			}
		}
		for _, r := range repairs {
			id, err := ParseRepairID(r)
			if err != nil {
				t.Fatal(err)
			}
			if want := uint16(min(i+1, 3)); id.NSS != want || id.LastESI() != uint32(i) {
				t.Errorf("source %d: repair window %d ending at %d, want %d ending at %d", i, id.NSS, id.LastESI(), want, i)
			}
			rec, err := dec.AddRepair(r)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rec {
				got = append(got, Recovered{ESI: r.ESI, Data: bytes.Clone(r.Data)})
			}
		}
	}
	if len(got) != 2 || got[0].ESI+got[1].ESI != 3 {
		t.Fatalf("recovered %+v, want ESIs 1 and 2", got)
	}
	for _, r := range got {
		if !bytes.Equal(r.Data, payloads[r.ESI]) {
			t.Errorf("ESI %d recovered as %q, want %q", r.ESI, r.Data, payloads[r.ESI])
		}
	}
	if enc.Err() != nil || enc.Controller() != Controller(ctl) {
		t.Errorf("Err %v, controller %v", enc.Err(), enc.Controller())
	}
}

func TestRLCEncoderReactsToFeedbackWithWiderWindow(t *testing.T) {
	ctl, err := NewAdaptiveController(AdaptiveConfig{MinWindow: 8, MaxWindow: 64, Coverage: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := NewRLCEncoder(RLCConfig{Controller: ctl, MaxWindow: 64})
	if err != nil {
		t.Fatal(err)
	}
	inflight := 0
	for range 50 {
		inflight = len(enc.AddSource([]byte("payload")))
	}
	repairs := enc.OnFeedback(Feedback{FirstESI: 49, Sources: 1, Lost: 3, Bursts: 1, MaxBurst: 3, Unrecovered: 3, OldestUnrecovered: 15})
	// Source 49's own repairs were in flight when the report was written.
	if len(repairs) != 3-inflight {
		t.Fatalf("%d repairs for 3 missing sources with %d in flight", len(repairs), inflight)
	}
	for _, r := range repairs {
		id, err := ParseRepairID(r)
		if err != nil {
			t.Fatal(err)
		}
		// The oldest missing source is 35 back: the window reaches it.
		if id.FirstESI != 15 || id.NSS != 35 || ctl.planned() != 8 {
			t.Errorf("reaction repair covers %d sources from %d, want 35 from 15 (planned window %d)", id.NSS, id.FirstESI, ctl.planned())
		}
	}
}

func TestRLCEncoderRecordsErrors(t *testing.T) {
	if _, err := NewRLCEncoder(RLCConfig{}); err == nil {
		t.Error("encoder without a controller accepted")
	}
	ctl, err := NewFixedController(FixedConfig{Sources: 1, Repairs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewRLCEncoder(RLCConfig{Controller: ctl, MaxWindow: 5000}); !errors.Is(err, ErrBadConfig) {
		t.Errorf("MaxWindow 5000: error %v, want ErrBadConfig", err)
	}
	enc, err := NewRLCEncoder(RLCConfig{Controller: ctl, MaxSymbolSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	if r := enc.AddSource([]byte("too long")); r != nil || !errors.Is(enc.Err(), ErrSymbolTooLarge) {
		t.Errorf("oversized payload: repairs %v, Err %v", r, enc.Err())
	}
	if r := enc.AddSource([]byte("ok")); len(r) != 1 {
		t.Errorf("after a refused payload: %d repairs, want 1", len(r))
	}
}

package crypto

import (
	"bytes"
	"errors"
	"testing"
)

func TestRetryTamperedFails(t *testing.T) {
	for _, vec := range allVectors {
		t.Run(vec.version.String(), func(t *testing.T) {
			dcid := unhex(t, vecDCID)
			pkt := unhex(t, vec.retryPacket)
			for i := range pkt {
				bad := bytes.Clone(pkt)
				bad[i] ^= 0x20
				if err := VerifyRetry(bad, dcid, vec.version); !errors.Is(err, ErrAuthentication) {
					t.Fatalf("byte %d changed: err %v, want ErrAuthentication", i, err)
				}
			}
			other := bytes.Clone(dcid)
			other[0] ^= 1
			if err := VerifyRetry(pkt, other, vec.version); !errors.Is(err, ErrAuthentication) {
				t.Errorf("another original DCID: err %v, want ErrAuthentication", err)
			}
			if err := VerifyRetry(pkt, dcid[:7], vec.version); !errors.Is(err, ErrAuthentication) {
				t.Errorf("shorter original DCID: err %v, want ErrAuthentication", err)
			}
			otherVersion := Version1
			if vec.version == Version1 {
				otherVersion = Version2
			}
			if err := VerifyRetry(pkt, dcid, otherVersion); !errors.Is(err, ErrAuthentication) {
				t.Errorf("tag checked with %v keys: err %v, want ErrAuthentication", otherVersion, err)
			}
		})
	}
}

func TestRetryBadInput(t *testing.T) {
	pkt := unhex(t, v1Vectors.retryPacket)
	dcid := unhex(t, vecDCID)
	for n := range minRetryLen {
		if err := VerifyRetry(pkt[:n], dcid, Version1); !errors.Is(err, ErrPacketTooShort) {
			t.Fatalf("%d-byte Retry: err %v, want ErrPacketTooShort", n, err)
		}
	}
	if _, err := AppendRetryTag(pkt[:6], dcid, Version1); !errors.Is(err, ErrPacketTooShort) {
		t.Errorf("6-byte Retry body: err %v, want ErrPacketTooShort", err)
	}
	long := make([]byte, MaxConnIDLen+1)
	if err := VerifyRetry(pkt, long, Version1); !errors.Is(err, ErrConnIDLen) {
		t.Errorf("21-byte ODCID: err %v, want ErrConnIDLen", err)
	}
	if _, err := AppendRetryTag(pkt[:len(pkt)-TagLen], long, Version1); !errors.Is(err, ErrConnIDLen) {
		t.Errorf("21-byte ODCID: err %v, want ErrConnIDLen", err)
	}
	if err := VerifyRetry(pkt, dcid, Version(0x0a0a0a0a)); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("reserved version: err %v, want ErrUnknownVersion", err)
	}
}

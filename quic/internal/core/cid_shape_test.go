package core

import (
	"errors"
	"io"
	"testing"
	"time"
)

// TestNewConnIDShapesIssuedIDs: with Config.NewConnID every connection ID
// the server issues, its first and those of NEW_CONNECTION_ID, comes from
// it, and the client uses them.
func TestNewConnIDShapesIssuedIDs(t *testing.T) {
	ccfg, scfg := testConfigs(t, 83)
	calls := 0
	scfg.NewConnID = func(id []byte, r io.Reader) error {
		calls++
		if _, err := io.ReadFull(r, id); err != nil {
			return err
		}
		id[0] = 0x5a // a mark a steering program or load balancer reads
		return nil
	}
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	ids := p.server.LocalConnIDs()
	if len(ids) != DefaultActiveConnIDLimit || calls != len(ids) {
		t.Fatalf("%d connection IDs from %d calls", len(ids), calls)
	}
	for _, id := range ids {
		if b := id.Bytes(); len(b) != DefaultConnIDLen || b[0] != 0x5a {
			t.Errorf("server issued %x", b)
		}
	}
	if b := p.client.cids.dcid().Bytes(); b[0] != 0x5a {
		t.Errorf("client sends to %x", b)
	}
}

// TestNewConnIDError: a server that cannot make its first connection ID
// does not start, and says why.
func TestNewConnIDError(t *testing.T) {
	ccfg, scfg := testConfigs(t, 84)
	scfg.NewConnID = func([]byte, io.Reader) error { return errors.New("no IDs") }
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	d, ok := p.client.NextDatagram(0, nil)
	if !ok {
		t.Fatal("the client sent no Initial")
	}
	params, ok := p.listenDefault(d.Data)
	if !ok {
		t.Fatal("the client's Initial was not accepted")
	}
	if _, err := NewServerConn(scfg, 0, params); err == nil {
		t.Fatal("the server started without a connection ID")
	}
}

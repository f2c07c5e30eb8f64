package capture

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"time"
	"testing"
)

func TestZZDump(t *testing.T) {
	dir := os.Getenv("CAPDIR")
	if dir == "" {
		t.Skip()
	}
	data, _ := os.ReadFile(filepath.Join(dir, "capture.pcap"))
	server := netip.MustParseAddrPort(os.Getenv("CAPSERVER"))
	recs, err := ReadPcap(data, func(a netip.AddrPort) bool {
		return a != server
	})
	if err != nil {
		t.Fatal(err)
	}
	k1, _ := os.ReadFile(filepath.Join(dir, "client.keylog"))
	k2, _ := os.ReadFile(filepath.Join(dir, "server.keylog"))
	a := Analyze(recs, ParseKeyLog(append(append(k1, '\n'), k2...)))
	for i, d := range a.Datagrams {
		if i > 100000 {
			break
		}
		for _, p := range d.Packets {
			pl := p.payload
			if len(pl) > 24 {
				pl = pl[:24]
			}
			fmt.Printf("%d %s c=%v %v v=%x dcid=%x scid=%x tok=%d size=%d hdr=%v pn=%d kp=%d open=%v stray=%v conn=%p %x\n", i, d.Time.Sub(a.Datagrams[0].Time).Round(100*time.Microsecond), d.FromClient, p.Type, p.Version, p.DCID, p.SCID, len(p.Token), p.Size, p.HeaderOpened, p.PN, p.KeyPhase, p.Opened, p.Stray, p.Conn, pl)
		}
	}
	for _, c := range a.Conns {
		fmt.Printf("conn %p cid=%x server=%x retry=%x ch=%v sh=%+v secrets=%v\n", c, c.ClientCID, c.ServerCIDs, c.RetrySCIDs, c.ClientHello != nil, c.ServerHello, c.Secrets)
	}
}

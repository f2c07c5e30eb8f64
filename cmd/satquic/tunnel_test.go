package main

import (
	"bytes"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/gateway"
	"github.com/satquic/satquic/quic"
	"github.com/satquic/satquic/tunnel"
)

// TestTunnelBadFlags: each mistake on the command line or in the config
// file gives a usage error (exit status 2) that names it, before anything
// needs root.
func TestTunnelBadFlags(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknownKey := write("unknown.json", `{"listen": ":4433", "tokn": "x"}`)
	badValue := write("badvalue.json", `{"token": "x", "mtu": {"n": 1}}`)
	notJSON := write("notjson.json", `listen = ":4433"`)
	badPool := write("badpool.json", `{"token": "x", "pool": ["10.77.0.0/24", "nonsense"]}`)
	emptyToken := write("empty-token", "\n# only a comment\n")
	spacedToken := write("spaced-token", "good\ntwo words\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tunnel"}, "tunnel needs server or client"},
		{[]string{"tunnel", "middle"}, `tunnel "middle": want server or client`},
		{[]string{"tunnel", "server"}, "needs --token, --token-file or --client-ca"},
		{[]string{"tunnel", "server", "--token", "x", "--pool", "10.77.0.0/31"}, "--pool 10.77.0.0/31: too small"},
		{[]string{"tunnel", "server", "--token", "x", "--pool", "10.77.0.300/24"}, "is not an IP prefix"},
		{[]string{"tunnel", "server", "--token", "x", "--route", "::/200"}, "is not an IP prefix"},
		{[]string{"tunnel", "server", "--token", "x", "--mtu", "1000"}, "--mtu 1000: want 1280 to 65535"},
		{[]string{"tunnel", "server", "--token", "x", "--cert", "c.pem"}, "--cert and --key go together"},
		{[]string{"tunnel", "server", "--token", "x", "--token-file", emptyToken}, "exclude each other"},
		{[]string{"tunnel", "server", "--token-file", emptyToken}, "no token in it"},
		{[]string{"tunnel", "server", "--token-file", spacedToken}, "line 2: a token must not contain white space"},
		{[]string{"tunnel", "server", "--token", "x", "--max-tunnels-per-client", "-1"}, "must not be negative"},
		{[]string{"tunnel", "server", "--token", "x", "--max-conns-per-ip", "0"}, "--max-conns-per-ip must be at least 1"},
		{[]string{"tunnel", "server", "--token-file", filepath.Join(dir, "missing")}, "--token-file"},
		{[]string{"tunnel", "server", "--token", "two words"}, "white space"},
		{[]string{"tunnel", "server", "--token", "x", "--listen", "nowhere:port"}, "--listen"},
		{[]string{"tunnel", "server", "--token", "x", "--stats", "-1s"}, "--stats must not be negative"},
		{[]string{"tunnel", "server", "--token", "x", "--fec-max-overhead", "2"}, "fec-max-overhead"},
		{[]string{"tunnel", "server", "--config", unknownKey}, `unknown key "tokn"`},
		{[]string{"tunnel", "server", "--config", badValue}, `key "mtu": want a string, a number, a boolean`},
		{[]string{"tunnel", "server", "--config", notJSON}, "not a JSON object"},
		{[]string{"tunnel", "server", "--config", badPool}, `key "pool"`},
		{[]string{"tunnel", "server", "--config", filepath.Join(dir, "missing.json")}, "--config"},
		{[]string{"tunnel", "client", "--token", "x"}, "--server is required"},
		{[]string{"tunnel", "client", "--server", "https://h:1"}, "needs --token, --token-file or --cert"},
		{[]string{"tunnel", "client", "--server", "https://h:1", "--token", "x", "--insecure", "--pin", "ab"}, "exclude each other"},
		{[]string{"tunnel", "client", "--server", "https://h:1", "--token", "x", "--mtu", "70000"}, "--mtu 70000"},
		{[]string{"tunnel", "client", "--server", "https://h:1", "--token", "x", "extra"}, `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		code := runMain(c.args, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}

// TestTunnelConfigFile: the file's keys set the flags the command line
// left alone, a list repeats a flag, and the command line wins.
func TestTunnelConfigFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "server.json")
	conf := `{"listen": "127.0.0.1:9999", "pool": ["10.9.0.0/24", "fd09::/64"], "route": "0.0.0.0/0",
		"token": "from-file", "stats": "10s", "mtu": 1300, "no-fec": true}`
	if err := os.WriteFile(p, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	o, err := tunnelServerFlags([]string{"--config", p, "--token", "from-flag"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if o.listen != "127.0.0.1:9999" || o.token != "from-flag" || o.mtu != 1300 || o.stats.String() != "10s" || !o.quic.fec.off {
		t.Errorf("options %+v", o)
	}
	if o.pool.String() != "10.9.0.0/24,fd09::/64" || o.routes.String() != "0.0.0.0/0" {
		t.Errorf("pool %v, routes %v", o.pool.String(), o.routes.String())
	}
	local, ifAddrs := o.localAddrs()
	if len(local) != 2 || local[0] != netip.MustParseAddr("10.9.0.1") || ifAddrs[1] != netip.MustParsePrefix("fd09::1/64") {
		t.Errorf("server addresses %v %v", local, ifAddrs)
	}
}

// TestClientRoutes: the client routes what the server advertised,
// narrowed by --route, and never the server's own address.
func TestClientRoutes(t *testing.T) {
	pfx := netip.MustParsePrefix
	all := []connectip.IPRoute{connectip.RouteFromPrefix(pfx("0.0.0.0/0"), 0)}
	pool := []connectip.IPRoute{connectip.RouteFromPrefix(pfx("10.77.0.0/24"), 0)}
	server := netip.MustParseAddr("192.0.2.7")

	routes, skipped := clientRoutes(pool, nil, server)
	if len(routes) != 1 || routes[0] != pfx("10.77.0.0/24") || skipped != nil {
		t.Errorf("pool: %v, skipped %v", routes, skipped)
	}
	routes, skipped = clientRoutes(pool, []netip.Prefix{pfx("10.77.0.128/25"), pfx("10.0.0.0/8"), pfx("172.16.0.0/12")}, server)
	if want := []netip.Prefix{pfx("10.77.0.128/25"), pfx("10.77.0.0/24")}; !slices.Equal(routes, want) || len(skipped) != 1 || skipped[0] != pfx("172.16.0.0/12") {
		t.Errorf("narrowed: %v, skipped %v", routes, skipped)
	}
	// Everything but the server: 32 prefixes, one of each length, none
	// holding it, and together all other addresses.
	routes, _ = clientRoutes(all, nil, server)
	if len(routes) != 32 {
		t.Fatalf("%d prefixes around the server: %v", len(routes), routes)
	}
	var size uint64
	for _, p := range routes {
		if p.Contains(server) {
			t.Errorf("%v holds the server", p)
		}
		size += 1 << (32 - p.Bits())
	}
	if size != 1<<32-1 {
		t.Errorf("the prefixes cover %d addresses, want 2^32-1", size)
	}
}

// TestTunnelServerLimits: the bounds on what clients hold come from flags
// or config keys: every token of the token file is a client, 0 lifts a
// tunnel bound, and the QUIC listener's limits reach its configuration.
func TestTunnelServerLimits(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("# one per client\nalice\n\n  bob  \ncarol\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "server.json")
	conf := `{"token-file": "` + tokens + `", "max-tunnels-per-client": 2, "max-tunnels-per-source": 0, "max-conns-per-ip": 16}`
	if err := os.WriteFile(p, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := tunnelServerFlags([]string{"--config", p, "--max-handshakes-per-ip", "4"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg := o.serverConfig(nil, io.Discard)
	if strings.Join(cfg.Tokens, ",") != "alice,bob,carol" || cfg.Token != "" || cfg.MaxTunnelsPerClient != 2 || cfg.MaxTunnelsPerSource != -1 {
		t.Errorf("server config %+v", cfg)
	}
	q := o.quic.config()
	if err := o.limits.apply(q); err != nil || q.MaxConnectionsPerIP != 16 || q.MaxHandshakesPerIP != 4 || q.MaxConnections != quic.DefaultMaxConnections {
		t.Errorf("QUIC limits %d %d %d: %v", q.MaxConnectionsPerIP, q.MaxHandshakesPerIP, q.MaxConnections, err)
	}
	o, err = tunnelServerFlags([]string{"--token", "x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg := o.serverConfig(nil, io.Discard); cfg.Token != "x" || cfg.Tokens != nil ||
		cfg.MaxTunnelsPerClient != gateway.DefaultMaxTunnelsPerClient || cfg.MaxTunnelsPerSource != gateway.DefaultMaxTunnelsPerSource ||
		o.limits.connsPerIP != gateway.DefaultMaxConnectionsPerSource {
		t.Errorf("default server config %+v", cfg)
	}
}

// TestTunnelLineFECOverhead: the statistics line gives the repair bytes
// as a share of the source bytes, what --fec-max-overhead caps.
func TestTunnelLineFECOverhead(t *testing.T) {
	tr := gateway.TransportStats{RepairsSent: 3, RepairBytesSent: 4_000, SourceBytesSent: 50_000}
	line := tunnelLine(tunnel.Stats{}, connectip.Stats{}, tr)
	if !strings.Contains(line, "repairs sent 3 (8.0% of the source bytes;") {
		t.Errorf("line %q", line)
	}
	if got := (gateway.TransportStats{}).FECOverhead(); got != 0 {
		t.Errorf("overhead of nothing sent %v", got)
	}
}

//go:build linux

package interop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/satquic/satquic/interop/capture"
	"github.com/satquic/satquic/netsim"
)

// caseRun holds what the cells of a case share: its files and
// certificate.
type caseRun struct {
	c     *Case
	work  string
	seed  uint64
	index int
	keep  bool
	www   string
	names []string
	cert  *certificate
	err   error
}

// prepare writes the case's files and certificate the first time a cell
// runs.
func (cr *caseRun) prepare() error {
	if cr.www != "" || cr.err != nil {
		return cr.err
	}
	cr.www = filepath.Join(cr.work, "www")
	if cr.err = os.MkdirAll(cr.www, 0o755); cr.err != nil {
		return cr.err
	}
	if cr.names, cr.err = writeFiles(cr.www, cr.c.Files, cr.c.nameLen()); cr.err != nil {
		return cr.err
	}
	chain := max(cr.c.CertChain, 1)
	cr.cert, cr.err = newCertificate(cr.work, chain)
	return cr.err
}

func (cr *caseRun) close() {
	if !cr.keep && cr.www != "" {
		os.RemoveAll(cr.www)
	}
}

// cell runs the case between client and server.
func (cr *caseRun) cell(ctx context.Context, client, server Implementation, prepared map[string]error, pairIndex int) Result {
	c := cr.c
	r := Result{Case: c.Name, Client: client.Name(), Server: server.Name()}
	unsupported := func(reason string) Result {
		r.Status, r.Reason = Unsupported, reason
		return r
	}
	if c.NotYet != "" {
		return unsupported(c.NotYet)
	}
	if why := client.Unsupported(Client, c.ClientTest); why != "" {
		return unsupported(client.Name() + " client: " + why)
	}
	if why := server.Unsupported(Server, c.ServerTest); why != "" {
		return unsupported(server.Name() + " server: " + why)
	}
	proto, ok := protocolFor(c, client, server)
	if !ok {
		return unsupported("no application protocol in common")
	}
	r.Protocol = proto
	for _, im := range []Implementation{client, server} {
		if err := prepared[im.Name()]; err != nil {
			return unsupported(fmt.Sprintf("%s: %v", im.Name(), err))
		}
	}
	if c.Link.Namespaces {
		if why := namespacesMissing(); why != "" {
			return unsupported(why)
		}
	}
	if err := cr.prepare(); err != nil {
		r.Status, r.Reason = Fail, "setting up the case: "+err.Error()
		return r
	}
	start := time.Now()
	run := cr.run(ctx, client, server, proto, pairIndex)
	r.Seconds = time.Since(start).Seconds()
	r.Link = run.link
	if run.analysis != nil {
		r.Capture = run.analysis.Summary()
	}
	if cr.keep {
		r.Logs = run.logs
	}
	r.Status = Pass
	if len(run.reasons) > 0 {
		r.Status, r.Reason = Fail, strings.Join(run.reasons, "; ")
		r.Known = known(r)
	}
	return r
}

// cellRun is what running a cell gave.
type cellRun struct {
	// reasons are why it failed, none if it passed.
	reasons []string
	// link says what the link did; analysis is the capture, read (nil
	// when the client failed).
	link     string
	analysis *capture.Analysis
	logs     string
}

// run runs one cell.
func (cr *caseRun) run(ctx context.Context, client, server Implementation, proto string, pairIndex int) (out cellRun) {
	c := cr.c
	out.logs = filepath.Join(cr.work, client.Name()+"_"+server.Name())
	fail := func(format string, args ...any) cellRun {
		out.reasons = append(out.reasons, fmt.Sprintf(format, args...))
		return out
	}
	download := filepath.Join(out.logs, "download")
	if err := os.MkdirAll(download, 0o755); err != nil {
		return fail("%v", err)
	}
	defer func() {
		if !cr.keep {
			os.RemoveAll(out.logs)
		}
	}()
	up, down := c.Link.links(cellSeed(cr.seed, cr.index, pairIndex))
	var net network = newRelayNetwork(c.IPv6, up, down, c.Link.Rebind)
	if c.Link.Namespaces {
		var err error
		if net, err = newNamespaceNetwork(out.logs, up, down); err != nil {
			return fail("starting the namespaces: %v", err)
		}
	}
	sj := &serverJob{test: c.ServerTest, proto: proto, host: net.serverHost(), port: net.serverPort(),
		www: cr.www, cert: cr.cert, keyLog: filepath.Join(out.logs, "server.keylog"), logs: out.logs}
	srv, err := server.StartServer(ctx, sj)
	if err != nil {
		_, _, _ = net.finish()
		return fail("starting the server: %v", err)
	}
	to, err := net.connect(srv.addr())
	if err != nil {
		_ = srv.stop()
		_, _, _ = net.finish()
		return fail("starting the link: %v", err)
	}
	cj := &clientJob{test: c.ClientTest, proto: proto, host: net.clientHost(), server: to,
		download: download, keyLog: filepath.Join(out.logs, "client.keylog"), logs: out.logs}
	for _, name := range cr.names {
		cj.urls = append(cj.urls, fileURL(to, name))
	}
	cctx, cancel := context.WithTimeoutCause(ctx, c.timeout(), fmt.Errorf("the case's time bound of %v passed", c.timeout()))
	clientErr := client.RunClient(cctx, cj)
	cancel()
	serverErr := srv.stop()
	records, link, netErr := net.finish()
	out.link = link
	for _, e := range []struct {
		who string
		err error
	}{{"client", clientErr}, {"server", serverErr}, {"link", netErr}} {
		if e.err != nil {
			out.reasons = append(out.reasons, e.who+": "+oneLine(e.err))
		}
	}
	if cr.keep {
		if err := writeCapture(filepath.Join(out.logs, "capture.pcap"), records); err != nil {
			out.reasons = append(out.reasons, "writing the capture: "+err.Error())
		}
	}
	keys := capture.ParseKeyLog(append(readFile(sj.keyLog), readFile(cj.keyLog)...))
	out.analysis = capture.Analyze(records, keys)
	if clientErr != nil {
		return out
	}
	if err := compareDownloads(cr.www, download, cr.names); err != nil {
		out.reasons = append(out.reasons, oneLine(err))
	}
	out.reasons = append(out.reasons, c.check(&outcome{c: c, a: out.analysis})...)
	return out
}

// writeCapture saves a cell's capture, to be read again or opened in
// Wireshark with the key logs.
func writeCapture(path string, records []capture.Record) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = capture.WritePcap(w, records)
	if err == nil {
		err = w.Flush()
	}
	return errors.Join(err, f.Close())
}

// cellSeed derives a cell's link seed from the run's.
func cellSeed(seed uint64, caseIndex, pairIndex int) uint64 {
	return netsim.DeriveSeed(seed, uint64(caseIndex), uint64(pairIndex))
}

func readFile(path string) []byte {
	b, _ := os.ReadFile(path)
	return append(b, '\n')
}

// oneLine keeps an error's message on one line, for the table.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// startBulkServer runs bulk-server with pipes; it returns the address, the
// certificate file that verifies it, a memory report on demand and the end
// of its standard input.
func startBulkServer(t *testing.T, idle bool) (addr, certFile string, mem func() memReport, stop func() error) {
	t.Helper()
	certFile, keyFile := writeTestCertificate(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	args := []string{"--addr", "127.0.0.1:0", "--cert", certFile, "--key", keyFile}
	if idle {
		args = append(args, "--idle")
	}
	go func() {
		done <- runBulkServer(args, inR, outW, io.Discard)
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	if !lines.Scan() {
		t.Fatalf("no announcement: %v", <-done)
	}
	var l listeningLine
	if err := json.Unmarshal(lines.Bytes(), &l); err != nil || l.Listening == "" {
		t.Fatalf("announcement %q: %v", lines.Bytes(), err)
	}
	mem = func() memReport {
		io.WriteString(inW, "mem\n")
		var m memReport
		if !lines.Scan() || json.Unmarshal(lines.Bytes(), &m) != nil {
			t.Fatalf("memory report %q", lines.Bytes())
		}
		return m
	}
	stop = sync.OnceValue(func() error {
		inW.Close()
		go io.Copy(io.Discard, outR)
		return <-done
	})
	t.Cleanup(func() { stop() })
	return l.Listening, certFile, mem, stop
}

func TestBulkServerAndClient(t *testing.T) {
	addr, caFile, mem, stop := startBulkServer(t, false)
	for _, n := range []int64{0, 1, 3<<20 + 7} {
		var out bytes.Buffer
		args := []string{"--addr", addr, "--ca", caFile, "--server-name", testServerName, "--size", strconv.FormatInt(n, 10)}
		if err := runBulkClient(args, strings.NewReader(""), &out, io.Discard); err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		var r bulkReport
		if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.Bytes != n || r.ElapsedNs <= 0 || r.HandshakeNs <= 0 {
			t.Errorf("%d bytes: %q: %v", n, out.Bytes(), err)
		}
	}
	if m := mem(); m.HeapBytes == 0 || m.StackBytes == 0 || m.RSSBytes == 0 {
		t.Errorf("memory report %+v", m)
	}
	if err := stop(); err != nil {
		t.Error(err)
	}
}

func TestBulkIdle(t *testing.T) {
	addr, caFile, mem, _ := startBulkServer(t, true)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		args := []string{"--addr", addr, "--ca", caFile, "--server-name", testServerName, "--conns", "30"}
		done <- runBulkClient(args, inR, outW, io.Discard)
		outW.Close()
	}()
	var r bulkReport
	if err := json.NewDecoder(outR).Decode(&r); err != nil || r.Open != 30 || r.OpenNs <= 0 {
		t.Fatalf("report %+v: %v", r, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for mem().Conns != 30 {
		if time.Now().After(deadline) {
			t.Fatal("the server never held the 30 connections")
		}
		time.Sleep(50 * time.Millisecond)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestBulkFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--addr", "127.0.0.1:1"},
		{"--addr", "127.0.0.1:1", "--ca", "x", "--size", "1", "--conns", "2"},
		{"--addr", "127.0.0.1:1", "--ca", "x", "--size", "-1"},
		{"--addr", "127.0.0.1:1", "--ca", "/nonexistent", "--size", "1"},
	} {
		if err := runBulkClient(args, strings.NewReader(""), io.Discard, io.Discard); err == nil {
			t.Errorf("client %q: no error", args)
		}
	}
	if err := runBulkServer([]string{"--addr", "127.0.0.1:0"}, strings.NewReader(""), io.Discard, io.Discard); err == nil {
		t.Error("server without a certificate: no error")
	}
}

package tunnelbench

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// inNamespace runs fn on a thread that entered the named network
// namespace (/run/netns/name, as ip netns add makes it), and returns the
// thread to its own namespace afterwards; a thread that cannot go back
// is never reused.
func inNamespace(name string, fn func() error) error {
	target, err := os.Open("/run/netns/" + name)
	if err != nil {
		return fmt.Errorf("network namespace %s: %w", name, err)
	}
	defer target.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			errc <- err
			return
		}
		defer home.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("entering network namespace %s: %w", name, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err != nil {
			// Left locked, the thread ends with the goroutine.
			errc <- errors.Join(ferr, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// vethPair is two network namespaces joined by a veth pair: nothing
// between them but the kernel, for the tunnel's own ceiling.
type vethPair struct {
	client, server string // namespaces
	clientAddr     string
	serverAddr     string
}

// vethDevice is the veth's name in both namespaces.
const vethDevice = "sqv0"

const (
	vethClientAddr = "10.88.0.1"
	vethServerAddr = "10.88.0.2"
)

func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %v: %v: %s", args, err, out)
	}
	return nil
}

// startVeth creates prefix-client and prefix-server joined by a veth
// pair. On error nothing is left behind.
func startVeth(prefix string) (*vethPair, error) {
	v := &vethPair{client: prefix + "-client", server: prefix + "-server", clientAddr: vethClientAddr, serverAddr: vethServerAddr}
	steps := [][]string{
		{"netns", "add", v.client},
		{"netns", "add", v.server},
		{"link", "add", vethDevice, "netns", v.client, "type", "veth", "peer", "name", vethDevice, "netns", v.server},
		{"-n", v.client, "addr", "add", v.clientAddr + "/24", "dev", vethDevice},
		{"-n", v.server, "addr", "add", v.serverAddr + "/24", "dev", vethDevice},
		{"-n", v.client, "link", "set", vethDevice, "up"},
		{"-n", v.server, "link", "set", vethDevice, "up"},
		{"-n", v.client, "link", "set", "lo", "up"},
		{"-n", v.server, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if err := ipCmd(s...); err != nil {
			v.close()
			return nil, err
		}
	}
	return v, nil
}

func (v *vethPair) do(ns string) side {
	return func(fn func() error) error { return inNamespace(ns, fn) }
}

// close deletes the namespaces, and with them the veth pair.
func (v *vethPair) close() {
	for _, ns := range []string{v.client, v.server} {
		if _, err := os.Stat("/run/netns/" + ns); err == nil {
			_ = ipCmd("netns", "delete", ns)
		}
	}
}

package bench

import (
	"os/exec"

	"github.com/satquic/satquic/emulate"
	"github.com/satquic/satquic/netsim"
)

// NamespacePaths starts each path as a fresh pair of network namespaces
// named prefix-client and prefix-server, so that no kernel state (the TCP
// metrics cache above all, which would hand a run the previous run's
// ssthresh) survives from one run to the next.
func NamespacePaths(prefix string) PathStarter {
	return func(p netsim.Profile) (Path, error) {
		n, err := emulate.StartNamespaces(emulate.NamespaceConfig{Prefix: prefix, Up: p.Up, Down: p.Down})
		if err != nil {
			return nil, err
		}
		return nsPath{n}, nil
	}
}

type nsPath struct{ n *emulate.Namespaces }

func (p nsPath) Env() Env {
	host := func(s emulate.Side) Host {
		return Host{
			Addr:    s.Addr,
			Do:      func(fn func() error) error { return p.n.Do(s, fn) },
			Command: func(name string, args ...string) *exec.Cmd { return p.n.Command(s, name, args...) },
		}
	}
	return Env{Server: host(p.n.Server()), Client: host(p.n.Client())}
}

func (p nsPath) Stats() PathStats {
	s := p.n.Stats()
	dir := func(d emulate.DirectionStats) DirectionStats {
		return DirectionStats{DroppedLoss: d.DroppedLoss, DroppedQueue: d.DroppedQueue, Late: d.Late}
	}
	return PathStats{Down: dir(s.Down), Up: dir(s.Up), HighPriority: s.HighPriority}
}
func (p nsPath) Close() error { return p.n.Close() }

package bench

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/satquic/satquic/netsim"
)

// Host is one end of the path a stack runs over.
type Host struct {
	// Addr is the host's IPv4 address on the emulated link.
	Addr netip.Addr
	// Do runs fn on a thread inside the host's network namespace: sockets
	// fn opens live there and may be used from any goroutine afterwards.
	// Goroutines fn starts do not inherit the namespace, so a dial or a
	// listen must happen in fn itself.
	Do func(fn func() error) error
	// Command returns a command that runs name with args inside the
	// host's namespace, for stacks that are external programs.
	Command func(name string, args ...string) *exec.Cmd
}

// Env is where one run takes place: a server host and a client host
// joined by the emulated path.
type Env struct {
	Server, Client Host
	// Profile is the emulated path, for a stack whose download depends
	// on it (satquic-resume sizes its first connection by the path's
	// bandwidth-delay product).
	Profile netsim.Profile
}

// Stack is a transport under test: a server that serves any number of
// bytes and a client that downloads them over a fresh connection.
type Stack interface {
	// Name is the name --stacks knows the stack by.
	Name() string
	// HandshakeRTTs is the number of round trips from the start of a
	// connection until the client may send its request: 2 for TCP with
	// TLS 1.3, 1 for QUIC, 0 for QUIC 0-RTT. The physical limit adds one
	// round trip for the request and response (see Limit).
	HandshakeRTTs() int
	// Check reports what keeps the stack from running on this machine
	// (a kernel module, a program), before any run starts.
	Check() error
	// Start starts a server on env.Server. The returned Endpoints
	// download from it on env.Client.
	Start(ctx context.Context, env Env) (Endpoints, error)
}

// Endpoints is a running server and the means to download from it.
type Endpoints interface {
	// Download fetches size bytes over a new connection from the client
	// host and reports the time from the start of the connection to the
	// last byte. It fails when fewer or more bytes arrive.
	Download(ctx context.Context, size int64) (Download, error)
	// Close stops the server and releases everything Start made.
	Close() error
}

// Download is the outcome of one download.
type Download struct {
	// Elapsed runs from the first packet of the connection (the
	// client's first handshake packet) to the last byte of the body.
	Elapsed time.Duration
	// Bytes is the size of the body received.
	Bytes int64
	// Detail is optional stack-specific information kept with the run
	// (for TCP, the congestion control the server's socket used).
	Detail string
}

// Factory makes a stack.
type Factory func() Stack

var (
	registryMu sync.Mutex
	registry   = map[string]Factory{}
)

// Register adds a stack under its name; stack files call it from init.
func Register(name string, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("bench: stack registered twice: " + name)
	}
	registry[name] = f
}

// Available lists the registered stack names, sorted.
func Available() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// planned are stacks the experiments will compare once their code exists,
// with what they wait for, so that asking for one says so rather than
// "unknown".
var planned = map[string]string{}

// LookupStack makes the named stack, or explains in one line why it
// cannot, listing the available ones.
func LookupStack(name string) (Stack, error) {
	registryMu.Lock()
	f, ok := registry[name]
	registryMu.Unlock()
	if ok {
		return f(), nil
	}
	avail := strings.Join(Available(), ", ")
	if why, ok := planned[name]; ok {
		return nil, fmt.Errorf("stack %q is not available yet (%s); available: %s", name, why, avail)
	}
	return nil, fmt.Errorf("unknown stack %q; available: %s", name, avail)
}

// VirtualStack is implemented by stacks that can also run in virtual
// time, over the discrete-event simulator instead of the emulator (--virtual).
// Only sans-IO stacks can: satquic's does; kernel TCP never will.
type VirtualStack interface {
	Stack
	// DownloadVirtual runs one download of size bytes over a fresh
	// simulated path with the profile's (seeded) links, seed seeding the
	// stack's own randomness, and gives up after limit of simulated
	// time. Elapsed is simulated time.
	DownloadVirtual(ctx context.Context, p netsim.Profile, seed uint64, size int64, limit time.Duration) (VirtualDownload, error)
}

// CongestionControlled is a stack whose congestion controller can be
// chosen (the satquic stacks); the others run their own.
type CongestionControlled interface {
	Stack
	// SetCongestionControl chooses the controller by the name
	// quic.Config.CongestionControl takes; "" is the library's default.
	SetCongestionControl(name string) error
	// CongestionControl is the controller's name.
	CongestionControl() string
}

// SetCongestionControl sets the controller of every stack that lets it be
// chosen; an empty name leaves the defaults.
func SetCongestionControl(stacks []Stack, name string) error {
	if name == "" {
		return nil
	}
	for _, s := range stacks {
		if c, ok := s.(CongestionControlled); ok {
			if err := c.SetCongestionControl(name); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckVirtual reports whether every stack can run in virtual time, and
// names those that can when one cannot.
func CheckVirtual(stacks []Stack) error {
	var can []string
	for _, n := range Available() {
		if s, err := LookupStack(n); err == nil {
			if _, ok := s.(VirtualStack); ok {
				can = append(can, n)
			}
		}
	}
	supported := "none"
	if len(can) > 0 {
		supported = strings.Join(can, ", ")
	}
	for _, s := range stacks {
		if _, ok := s.(VirtualStack); !ok {
			return fmt.Errorf("--virtual: stack %s runs only in real time; stacks that run in virtual time: %s", s.Name(), supported)
		}
	}
	return nil
}

// CloseStacks releases what stacks hold from one run to the next (the
// quic-go stack's built peer program); stacks without a Close method hold
// nothing. The caller that made the stacks calls it once it is done.
func CloseStacks(stacks []Stack) error {
	var errs []error
	for _, s := range stacks {
		if c, ok := s.(interface{ Close() error }); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

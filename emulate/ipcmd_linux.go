package emulate

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// ipCommand runs iproute2's ip. Namespace mode configures addresses,
// routes and namespaces with it rather than with raw netlink, so that what
// it does can be read, and repeated by hand, as ip commands.
type ipCommand struct{ path string }

func findIP() (ipCommand, error) {
	p, err := exec.LookPath("ip")
	if err != nil {
		return ipCommand{}, errors.New("the ip command (iproute2) is not installed; namespace mode needs it")
	}
	return ipCommand{path: p}, nil
}

func (c ipCommand) run(args ...string) error {
	var out bytes.Buffer
	cmd := exec.Command(c.path, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("ip %s: %s", strings.Join(args, " "), msg)
	}
	return nil
}

// inNS runs ip against the namespace name (ip -n).
func (c ipCommand) inNS(name string, args ...string) error {
	return c.run(append([]string{"-n", name}, args...)...)
}

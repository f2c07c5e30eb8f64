package tunnelbench

import "os"

// readInnerTCP reads the namespace's TCP counters from the calling
// thread's view of /proc, the namespace's own.
func readInnerTCP(ns side) (InnerTCP, error) {
	var c InnerTCP
	err := ns(func() error {
		for _, name := range []string{"/proc/thread-self/net/snmp", "/proc/thread-self/net/netstat"} {
			f, err := os.Open(name)
			if err != nil {
				return err
			}
			err = c.parse(f)
			_ = f.Close()
			if err != nil {
				return err
			}
		}
		return nil
	})
	return c, err
}

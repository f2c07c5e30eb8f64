//go:build linux

package emulate

import (
	"errors"
	"os"
)

// captures are the two pcap files of a run, PREFIX-up.pcap and
// PREFIX-down.pcap, or none when the prefix is empty.
type captures struct {
	up, down *pcapWriter
}

func openCaptures(prefix string) (*captures, error) {
	c := &captures{}
	if prefix == "" {
		return c, nil
	}
	var err error
	if c.up, err = createPcap(prefix + "-up.pcap"); err != nil {
		return nil, err
	}
	if c.down, err = createPcap(prefix + "-down.pcap"); err != nil {
		c.discard()
		return nil, err
	}
	return c, nil
}

func (c *captures) close() error {
	var errs []error
	for _, w := range []*pcapWriter{c.up, c.down} {
		if w != nil {
			errs = append(errs, w.close())
		}
	}
	return errors.Join(errs...)
}

// discard closes and removes the files, for a start that failed.
func (c *captures) discard() {
	for _, w := range []*pcapWriter{c.up, c.down} {
		if w != nil {
			_ = w.close()
			_ = os.Remove(w.file.Name())
		}
	}
}

//go:build linux

package tunnelbench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// tcpCounters are a namespace's TCP segments sent for the first time and
// again.
type tcpCounters struct{ out, retrans uint64 }

// parseSNMP finds the Tcp: header and value lines of /proc/net/snmp.
func parseSNMP(r io.Reader) (tcpCounters, error) {
	sc := bufio.NewScanner(r)
	var header []string
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "Tcp:" {
			continue
		}
		if header == nil {
			header = fields
			continue
		}
		var c tcpCounters
		found := 0
		for i := 1; i < len(fields) && i < len(header); i++ {
			dst := map[string]*uint64{"OutSegs": &c.out, "RetransSegs": &c.retrans}[header[i]]
			if dst == nil {
				continue
			}
			v, err := strconv.ParseUint(fields[i], 10, 64)
			if err != nil {
				return c, fmt.Errorf("/proc/net/snmp: %s %q: %w", header[i], fields[i], err)
			}
			*dst = v
			found++
		}
		if found != 2 {
			return c, errors.New("/proc/net/snmp: no OutSegs and RetransSegs in the Tcp line")
		}
		return c, nil
	}
	if err := sc.Err(); err != nil {
		return tcpCounters{}, err
	}
	return tcpCounters{}, errors.New("/proc/net/snmp: no Tcp lines")
}

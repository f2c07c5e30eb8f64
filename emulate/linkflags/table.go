package linkflags

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/satquic/satquic/netsim"
)

// WriteProfiles writes a table of profiles: name, rates, delays, loss,
// queue and description.
func WriteProfiles(w io.Writer, profiles []netsim.Profile) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDOWN/UP\tDELAY DOWN/UP\tLOSS DOWN/UP\tQUEUE\tNOTES")
	for _, p := range profiles {
		fmt.Fprintf(tw, "%s\t%s/%s bit/s\t%s\t%s\t%s\t%s\n", p.Name,
			FormatRate(p.Down.RateBps), FormatRate(p.Up.RateBps),
			pair(delayText(p.Down), delayText(p.Up)), pair(lossText(p.Down), lossText(p.Up)),
			queueText(p.Down), p.Description)
	}
	return tw.Flush()
}

func pair(a, b string) string {
	if a == b {
		return a
	}
	return a + " / " + b
}

func delayText(c netsim.LinkConfig) string {
	s := c.Delay.String()
	if c.Jitter > 0 {
		s += "+-" + c.Jitter.String()
	}
	return s
}

func lossText(c netsim.LinkConfig) string {
	if c.Loss == "" {
		return "none"
	}
	return c.Loss
}

func queueText(c netsim.LinkConfig) string {
	if c.QueuePackets > 0 {
		return fmt.Sprintf("%d pkts", c.QueuePackets)
	}
	if c.QueueBytes > 0 {
		return fmt.Sprintf("%d B", c.QueueBytes)
	}
	return "1 BDP"
}

// Summary describes one direction of a link in a few words: rate, delay,
// jitter and loss.
func Summary(c netsim.LinkConfig) string {
	loss := c.Loss
	if loss == "" {
		loss = "no loss"
	}
	s := fmt.Sprintf("%s, %v", FormatRate(c.RateBps), c.Delay)
	if c.Trace != nil {
		s = fmt.Sprintf("trace, %v", c.Delay)
	}
	if c.Jitter > 0 {
		s += fmt.Sprintf(" +- %v", c.Jitter)
	}
	return s + ", " + loss
}

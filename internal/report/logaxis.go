package report

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// Logarithmic axes, for data whose spread dwarfs its least values: the
// download experiment's completion times run from near the physical limit
// to ten times it when a congestion control stumbles, and on a linear
// axis the good runs collapse into a line at the bottom. On a log axis
// equal ratios take equal room, so a run at twice the limit is as far
// from it at 1 MB as at 20 MB.

// logTicks marks a logarithmic axis at each integer times a power of ten,
// labelling 1, 2 and 5 times the powers (only the powers when the axis
// spans many decades, every tick when it spans too little for two labels).
type logTicks struct{}

// maxLogLabels bounds the labels of an axis before only powers of ten keep
// theirs.
const maxLogLabels = 8

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) || math.IsInf(max, 0) {
		return nil
	}
	var ticks []plot.Tick
	for e := int(math.Floor(math.Log10(min))); e <= int(math.Ceil(math.Log10(max))); e++ {
		for m := 1; m <= 9; m++ {
			// Parsing the decimal gives the float nearest to it, where
			// m * 10^e would carry the error of 10^e.
			v, err := strconv.ParseFloat(fmt.Sprintf("%de%d", m, e), 64)
			if err != nil || v < min || v > max {
				continue
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
		}
	}
	keep := func(pred func(v float64) bool) {
		for i := range ticks {
			if !pred(ticks[i].Value) {
				ticks[i].Label = ""
			}
		}
	}
	leading := func(v float64) int { return int(math.Round(v / math.Pow10(int(math.Floor(math.Log10(v)+1e-9))))) }
	labelled := 0
	for _, t := range ticks {
		if d := leading(t.Value); d == 1 || d == 2 || d == 5 {
			labelled++
		}
	}
	switch {
	case labelled < 2:
		// A narrow axis labels every tick.
	case labelled > maxLogLabels:
		keep(func(v float64) bool { return leading(v) == 1 })
	default:
		keep(func(v float64) bool { d := leading(v); return d == 1 || d == 2 || d == 5 })
	}
	return ticks
}

// errNotPositive is the error of a value a log axis cannot show.
var errNotPositive = errors.New("a logarithmic axis needs values above 0")

// setLogAxis makes ax logarithmic.
func setLogAxis(ax *plot.Axis) {
	ax.Scale = plot.LogScale{}
	ax.Tick.Marker = logTicks{}
}

package loss

import (
	"fmt"
	"strconv"
	"strings"
)

// parseProbability reads a probability written as a fraction ("0.01") or a
// percentage ("1%"), and checks that it lies in [0,1].
func parseProbability(name, s string) (float64, error) {
	s = strings.TrimSpace(s)
	scale := 1.0
	if rest, ok := strings.CutSuffix(s, "%"); ok {
		s, scale = rest, 100
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a number", name, s)
	}
	v /= scale
	if err := checkProbability(name, v); err != nil {
		return 0, err
	}
	return v, nil
}

// checkProbability rejects values outside [0,1], NaN included.
func checkProbability(name string, v float64) error {
	if !(v >= 0 && v <= 1) {
		return fmt.Errorf("%s %v not in [0,1]", name, v)
	}
	return nil
}

// splitParams splits comma-separated parameters and checks their count.
func splitParams(kind, args string, minN, maxN int) ([]string, error) {
	parts := strings.Split(args, ",")
	if len(parts) < minN || len(parts) > maxN {
		if minN == maxN {
			return nil, fmt.Errorf("%s takes %d parameters, got %d", kind, minN, len(parts))
		}
		return nil, fmt.Errorf("%s takes %d to %d parameters, got %d", kind, minN, maxN, len(parts))
	}
	return parts, nil
}

// formatFloat prints the shortest decimal that reads back to v exactly.
func formatFloat(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}

package views

import (
	"strings"

	"github.com/reach-lab/reach/internal/comparability"
)

// comparabilityLabels names the differing settings: "temperature, prompt template".
func comparabilityLabels(ds []comparability.Difference) string {
	labels := make([]string, len(ds))
	for i, d := range ds {
		labels[i] = d.Label
	}
	return strings.Join(labels, ", ")
}

// designSep ends the i-th of n models' widths: ", " between, "." after the last.
func designSep(i, n int) string {
	if i == n-1 {
		return "."
	}
	return ", "
}

// sweepOnly says whether the only differing setting is the temperature of a
// deliberate temperature sweep.
func sweepOnly(cp *comparability.Result) bool {
	return cp.TemperatureSweep && len(sweepless(cp)) == 0
}

// sweepless is the differing settings without the temperature of a sweep.
func sweepless(cp *comparability.Result) []comparability.Difference {
	var out []comparability.Difference
	for _, d := range cp.Differences {
		if !(cp.TemperatureSweep && d.Key == "temperature") {
			out = append(out, d)
		}
	}
	return out
}

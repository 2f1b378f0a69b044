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

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

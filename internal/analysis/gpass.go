package analysis

import (
	"fmt"

	"github.com/reach-lab/reach/internal/passk"
)

// GPassTaus are the thresholds G-Pass@k is reported at (Liu et al. 2024
// report 0.25, 0.5, 0.75 and 1.0; τ = 1 is pass^k, every sample right).
var GPassTaus = []float64{0.25, 0.5, 0.75, 1}

// GPass is a model's G-Pass@k_τ at one k: Values[j] at GPassTaus[j], and
// mG-Pass@k (the mean over τ in (0.5, 1]).
type GPass struct {
	K      int       `json:"k"`
	Values []float64 `json:"g_pass"` // at taus, in order
	Taus   []float64 `json:"taus"`
	MG     float64   `json:"mg_pass"`
}

// gPassFigures fills each model's G-Pass@k at the ks of the breakdowns'
// curves (powers of two and KMax) from its counts on the kept problems.
func (rep *Report) gPassFigures(models [][]passk.Count) error {
	if rep.KSampled < 1 {
		return nil
	}
	ks := GroupKs(rep.KSampled)
	for m := range rep.Models {
		g, mg, err := passk.GPassCurve(models[m], ks, GPassTaus)
		if err != nil {
			return fmt.Errorf("G-Pass@k of %q: %w", rep.Models[m].Name, err)
		}
		rep.Models[m].GPass = make([]GPass, len(ks))
		for i, k := range ks {
			rep.Models[m].GPass[i] = GPass{K: k, Values: g[i], Taus: GPassTaus, MG: mg[i]}
		}
	}
	return nil
}

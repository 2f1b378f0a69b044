package analysis

import (
	"fmt"

	"github.com/reach-lab/reach/internal/passk"
)

// GPassTaus are the thresholds G-Pass@k is reported at (Liu et al. 2024
// report 0.25, 0.5, 0.75 and 1.0; τ = 1 is pass^k, every sample right).
var GPassTaus = []float64{0.25, 0.5, 0.75, 1}

// GPass is a model's G-Pass@k_τ at one k: Values[j] at GPassTaus[j], and
// mG-Pass@k (the mean over τ in (0.5, 1]), each with its 95% bootstrap
// interval over problems (Lo[j], Hi[j]; MGLo, MGHi).
type GPass struct {
	K      int       `json:"k"`
	Values []float64 `json:"g_pass"` // at taus, in order
	Lo     []float64 `json:"g_pass_lo"`
	Hi     []float64 `json:"g_pass_hi"`
	Taus   []float64 `json:"taus"`
	MG     float64   `json:"mg_pass"`
	MGLo   float64   `json:"mg_pass_lo"`
	MGHi   float64   `json:"mg_pass_hi"`
}

// gPassDraws and gPassSeed fix G-Pass@k's bootstrap (seeded like the
// statistics job's intervals), so a rebuilt report has the same intervals.
const (
	gPassDraws = 1000
	gPassSeed  = DefaultSeed
)

// gPassFigures fills each model's G-Pass@k at the ks of the breakdowns'
// curves (powers of two and KMax) from its counts on the kept problems, with
// percentile-bootstrap intervals over problems (passk.GPassBootstrap).
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
		b, err := passk.GPassBootstrap(models[m], ks, GPassTaus, gPassDraws, gPassSeed, 0.95)
		if err != nil {
			return fmt.Errorf("G-Pass@k intervals of %q: %w", rep.Models[m].Name, err)
		}
		rep.Models[m].GPass = make([]GPass, len(ks))
		for i, k := range ks {
			rep.Models[m].GPass[i] = GPass{K: k, Values: g[i], Lo: b.Lo[i], Hi: b.Hi[i], Taus: GPassTaus, MG: mg[i], MGLo: b.MGLo[i], MGHi: b.MGHi[i]}
		}
	}
	return nil
}

package analysis

import (
	"encoding/json"
	"fmt"

	"github.com/reach-lab/reach/internal/adaptive"
	"github.com/reach-lab/reach/internal/passk"
)

// Beyond is how a model's curve goes past the k its every problem was sampled at. An adaptive
// design (issue 24) leaves each problem with its own n: pass@k is then the unbiased estimator
// on the problems with n >= k and, on the others, the posterior mean of 1 − (1 − p)^k under a
// prior of success rates fitted to the model's counts (passk.PassAtKBeyond).
type Beyond struct {
	// FromK is the first k at which some problem's value is extrapolated (its smallest n + 1).
	FromK int        `json:"extrapolated_from_k"`
	Prior PriorFit   `json:"prior"`
	Bands []Band     `json:"pass_at_k_posterior_ci"` // at ChartKs(KMax): this problem set's 95% posterior interval
	Share []ShareAtK `json:"extrapolated_share"`     // at ChartKs(KMax), from FromK on
}

// ShareAtK is the share of problems, in [0, 1], whose pass@k at K is extrapolated.
type ShareAtK struct {
	K     int     `json:"k"`
	Share float64 `json:"share"`
}

// PriorFit is the fitted passk.Prior and how well it fits.
type PriorFit struct {
	Zero      float64 `json:"zero"`
	One       float64 `json:"one"`
	Alpha     float64 `json:"alpha"`
	Beta      float64 `json:"beta"`
	Chi2      float64 `json:"chi2"`
	Chi2DF    int     `json:"chi2_df"`
	Chi2P     float64 `json:"chi2_p"`
	Departure float64 `json:"departure"` // the prior's curve vs the data's at CheckKs, in [0, 1]
	CheckKs   []int   `json:"check_ks"`
	// Degenerate: every count was 0 correct (or all correct), so no rate could be fitted.
	Degenerate bool `json:"degenerate,omitempty"`
	Poor       bool `json:"poor"`
}

func (f PriorFit) prior() passk.Prior {
	return passk.Prior{Zero: f.Zero, One: f.One, Alpha: f.Alpha, Beta: f.Beta}
}

// Design describes an adaptive sampling design: what it drew against a uniform design.
type Design struct {
	Target  int `json:"target_n"`
	Budget  int `json:"budget"`
	Drawn   int `json:"drawn"`
	Uniform int `json:"uniform"` // Target × models × problems
	// Widest is, per model, the widest 95% posterior interval over the curve's ks, in points.
	Widest []float64 `json:"widest_interval_points"`
}

// sampledConfig is what the report reads of a comparison's sampling config
// (jobs.SamplingConfig, whose JSON names these are): an adaptive design's
// target n and budget, and the problem limit. Zero for an imported comparison.
type sampledConfig struct {
	N        int  `json:"n"`
	Adaptive bool `json:"adaptive"`
	Budget   int  `json:"budget"`
	Limit    int  `json:"limit"` // only the dataset's first Limit problems were sampled
}

func readSampledConfig(raw []byte) sampledConfig {
	var cfg sampledConfig
	if len(raw) == 0 || json.Unmarshal(raw, &cfg) != nil {
		return sampledConfig{}
	}
	return cfg
}

// beyondCurve fills m's curve to k = extendTo from counts whose smallest n is below it.
func beyondCurve(m *ModelReport, cs []passk.Count, nmin, extendTo int) error {
	prior, err := passk.FitPrior(cs)
	if err != nil {
		return err
	}
	ks := passk.AllKs(extendTo)
	b, err := passk.Beyond(cs, ks, prior)
	if err != nil {
		return err
	}
	m.N = extendTo
	m.PassAtK = make([]Point, extendTo)
	for j, k := range ks {
		m.PassAtK[j] = Point{K: k, Value: b.PassAtK[j], Extrapolated: k > nmin}
	}
	bx := &Beyond{FromK: nmin + 1, Prior: priorFit(prior)}
	for _, k := range ChartKs(extendTo) {
		bx.Bands = append(bx.Bands, Band{K: k, Lo: b.Lo[k-1], Hi: b.Hi[k-1]})
		if k > nmin {
			bx.Share = append(bx.Share, ShareAtK{K: k, Share: b.Extrapolated[k-1]})
		}
	}
	m.Beyond = bx
	return nil
}

// design summarises an adaptive comparison's sampling (nil otherwise).
func design(cfg sampledConfig, models [][]passk.Count) (*Design, error) {
	target := cfg.N
	if !cfg.Adaptive || target < 2 || len(models) == 0 {
		return nil, nil
	}
	st, err := adaptive.Summarize(models, adaptive.Options{Target: target, Budget: cfg.Budget})
	if err != nil {
		return nil, fmt.Errorf("adaptive design: %w", err)
	}
	d := &Design{Target: target, Budget: st.Budget, Drawn: st.Drawn, Uniform: st.Uniform}
	for _, w := range st.Widest {
		v := 0.0
		if w != nil {
			v = 100 * *w
		}
		d.Widest = append(d.Widest, v)
	}
	return d, nil
}

// extendedPriors returns each model's fitted prior when the report's curves
// go past the sampled k (nil otherwise): the bootstrap's rows beyond a
// problem's n use them.
func (rep *Report) extendedPriors() []passk.Prior {
	if rep.KSampled == 0 || rep.KSampled >= rep.KMax {
		return nil
	}
	out := make([]passk.Prior, len(rep.Models))
	for m, mr := range rep.Models {
		if mr.Beyond == nil {
			// Every problem of this model reaches KMax: the prior is never consulted.
			out[m] = passk.Prior{Alpha: 1, Beta: 1}
			continue
		}
		out[m] = mr.Beyond.Prior.prior()
	}
	return out
}

// checkExtrapolated says, for every model whose curve goes past its
// smallest n, from which k its values rest on the fitted prior and on how
// many problems at k max; a poor fit (passk.GoodnessOfFit.Poor) is a
// warning that those values may be off.
func checkExtrapolated(rep *Report) []Warning {
	var out []Warning
	for _, m := range rep.Models {
		b := m.Beyond
		if b == nil || len(b.Share) == 0 {
			continue
		}
		share := b.Share[len(b.Share)-1].Share
		w := Warning{Code: "extrapolated", Severity: SeverityInfo, Models: []string{m.Name},
			Figures: []string{FigurePassK, FigureCrossover, FigureDeltaSE},
			Text: fmt.Sprintf("%s's pass@k from k = %d to %d is extrapolated (dashed on the charts) on the problems sampled fewer than k times: %.0f%% of them at k = %d. "+
				"There each problem's pass@k is its posterior mean under a prior of success rates fitted to the model's counts "+
				"(%.1f%% never solved, %.1f%% always, Beta(%.2f, %.2f) otherwise); the prior's curve departs from the sampled one by %.2f points at k = %v.",
				m.Name, b.FromK, rep.KMax, 100*share, rep.KMax, 100*b.Prior.Zero, 100*b.Prior.One, b.Prior.Alpha, b.Prior.Beta,
				100*b.Prior.Departure, b.Prior.CheckKs)}
		if b.Prior.Degenerate {
			w.Code, w.Severity = "extrapolation-poor-fit", SeverityWarning
			w.Text += fmt.Sprintf(" Every sample of %s was graded alike (all wrong or all right) on every problem, so no success rate can be fitted: the extrapolated values and their intervals are not estimates. Check the grading (a code harness, an answer format) before sampling more.", m.Name)
		} else if b.Prior.Poor {
			w.Code, w.Severity = "extrapolation-poor-fit", SeverityWarning
			w.Text += fmt.Sprintf(" That is more than %.1f points: the fitted shape misses how this model's pass@k grows where its samples end, so the extrapolated values may be off; sample more (Extend) rather than trust them.",
				100*passk.PoorDeparture)
		}
		out = append(out, w)
	}
	return out
}

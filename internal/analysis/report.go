// Package analysis builds one comparison's report (pass@k curves, crossover,
// ΔSE, solved sets, histograms, per-problem counts) from the store's counts
// using the pure statistics in internal/passk.
package analysis

import (
	"context"
	"errors"
	"fmt"

	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
)

// HistogramBins is the number of interior bins of the accuracy histogram
// (plus exact 0 and exact 1).
const HistogramBins = 10

// ΔSE uses pass@256 of the base model, or its largest sampled k below that
// (Yue et al. 2025, arXiv 2504.13837, §3).
const deltaSEK = 256

// Report is what the comparison page, `reach report --json` and
// GET /api/v1/comparisons/{id}/report show.
type Report struct {
	ComparisonID int64  `json:"comparison_id"`
	Name         string `json:"name"`
	Dataset      string `json:"dataset"`
	Status       string `json:"status"`
	SourceNote   string `json:"source_note,omitempty"`
	// Problems is how many problems enter the statistics: those with
	// samples from every model. Dropped counts dataset problems left out.
	Problems int `json:"problems"`
	Dropped  int `json:"dropped_problems"`
	// KMax is the largest k every model was sampled at (min n).
	KMax   int           `json:"k_max"`
	Models []ModelReport `json:"models"`
	// Pairs compares the base model (Models[0]) with each other model.
	Pairs []PairReport `json:"pairs"`
	// BaseOnly lists the problems only the base model solved against the
	// first other model (Pairs[0]), the ones to review.
	BaseOnly []string `json:"base_only"`

	// Rows is the per-problem table (not in the JSON: counts are per model).
	Rows []ProblemRow `json:"-"`
}

// ModelReport is one model's curve and counts.
type ModelReport struct {
	RunID         int64   `json:"run_id"`
	Name          string  `json:"name"`
	Role          string  `json:"role"`
	Step          *int    `json:"step,omitempty"`
	VerdictSource string  `json:"verdict_source"`
	HasTexts      bool    `json:"has_texts"`
	N             int     `json:"n"`         // samples per problem (the smallest, if they differ)
	PassAtK       []Point `json:"pass_at_k"` // every k from 1 to N
	Pass1         float64 `json:"pass_at_1"`
	PassN         float64 `json:"pass_at_n"`
	Solved        int     `json:"solved"` // problems with c >= 1
	// Crossover and DeltaSE repeat, for non-base models, this model's pair
	// with the base model.
	Crossover *Crossover     `json:"crossover,omitempty"`
	DeltaSE   *float64       `json:"delta_se,omitempty"`
	Histogram []HistogramBin `json:"histogram"`
	Counts    []ProblemCount `json:"counts"`
}

// Point is pass@k at one k (Value in [0, 1]).
type Point struct {
	K     int     `json:"k"`
	Value float64 `json:"value"`
}

// HistogramBin is one bar of the per-problem accuracy histogram.
type HistogramBin struct {
	Label string  `json:"label"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Count int     `json:"count"`
}

// ProblemCount is one model's counts on one problem.
type ProblemCount struct {
	ProblemID string `json:"problem_id"`
	N         int    `json:"n"`
	C         int    `json:"c"`
}

// Crossover is where the base model's curve reaches the other model's.
type Crossover struct {
	Found bool    `json:"found"`
	K     float64 `json:"k,omitempty"` // interpolated on log2 k
	// AtSampledK is the first sampled k where base >= other.
	AtSampledK int    `json:"at_sampled_k,omitempty"`
	Label      string `json:"label"`
}

// Solved holds the solved-set counts of a pair (a problem is solved if c >= 1).
type Solved struct {
	Both      int `json:"both"`
	BaseOnly  int `json:"base_only"`
	OtherOnly int `json:"other_only"`
	Neither   int `json:"neither"`
}

// PairReport compares the base model with one other model.
type PairReport struct {
	Base      string    `json:"base"`
	Other     string    `json:"other"`
	Crossover Crossover `json:"crossover"`
	// DeltaSE = pass@k(base) − pass@1(other) at k = DeltaSEK.
	DeltaSE   float64  `json:"delta_se"`
	DeltaSEK  int      `json:"delta_se_k"`
	Solved    Solved   `json:"solved"`
	BaseOnly  []string `json:"base_only"`
	OtherOnly []string `json:"other_only"`
}

// ProblemRow is one line of the problem table.
type ProblemRow struct {
	ProblemID int64
	Key       string
	Idx       int
	Subject   string
	Level     string
	Counts    []passk.Count // per model, in Models order
	// Region against the first other model: both, base-only, other-only, neither.
	Region string
}

// ErrNotReady is returned while a comparison's counts are not complete.
var ErrNotReady = errors.New("comparison is not ready")

// Build reads a comparison and its counts from the store and computes the
// report. It returns ErrNotReady (wrapped) until every run has counts.
func Build(ctx context.Context, st *store.Store, id int64) (*Report, error) {
	c, err := st.GetComparison(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.Status != store.StatusReady {
		return nil, fmt.Errorf("comparison %d is %s: %w", id, c.Status, ErrNotReady)
	}
	if c.DatasetID == nil || len(c.Runs) < 2 {
		return nil, fmt.Errorf("comparison %d has no dataset or fewer than two models: %w", id, ErrNotReady)
	}
	problems, err := st.Problems(ctx, *c.DatasetID, false)
	if err != nil {
		return nil, err
	}
	counts, err := st.CountsForComparison(ctx, id)
	if err != nil {
		return nil, err
	}
	return Compute(c, problems, counts)
}

// Compute builds the report from already-loaded rows (pure; Build's core).
// counts maps run id to that run's per-problem counts.
func Compute(c store.Comparison, problems []store.Problem, counts map[int64][]store.Count) (*Report, error) {
	rep := &Report{ComparisonID: c.ID, Name: c.Name, Dataset: c.DatasetName, Status: c.Status, SourceNote: c.SourceNote}

	// Keep the problems every model has counts for, in dataset order.
	byRun := make([]map[int64]store.Count, len(c.Runs))
	for i, r := range c.Runs {
		m := make(map[int64]store.Count, len(counts[r.ID]))
		for _, x := range counts[r.ID] {
			m[x.ProblemID] = x
		}
		byRun[i] = m
	}
	var kept []store.Problem
	for _, p := range problems {
		all := true
		for i := range c.Runs {
			if _, ok := byRun[i][p.ID]; !ok {
				all = false
				break
			}
		}
		if all {
			kept = append(kept, p)
		}
	}
	rep.Problems, rep.Dropped = len(kept), len(problems)-len(kept)
	if len(kept) == 0 {
		return nil, fmt.Errorf("comparison %d: no problem has samples from every model", c.ID)
	}

	models := make([][]passk.Count, len(c.Runs))
	for i, r := range c.Runs {
		cs := make([]passk.Count, len(kept))
		pcs := make([]ProblemCount, len(kept))
		for j, p := range kept {
			x := byRun[i][p.ID]
			cs[j] = passk.Count{N: x.N, C: x.C}
			pcs[j] = ProblemCount{ProblemID: p.Key, N: x.N, C: x.C}
		}
		models[i] = cs
		m, err := modelReport(r, cs)
		if err != nil {
			return nil, fmt.Errorf("model %q: %w", r.ModelName, err)
		}
		m.Counts = pcs
		rep.Models = append(rep.Models, m)
		if i == 0 || m.N < rep.KMax {
			rep.KMax = m.N
		}
	}

	base := rep.Models[0]
	for i := 1; i < len(rep.Models); i++ {
		pr, err := pairReport(base, rep.Models[i], models[0], models[i], kept, rep.KMax)
		if err != nil {
			return nil, fmt.Errorf("base vs %q: %w", rep.Models[i].Name, err)
		}
		rep.Pairs = append(rep.Pairs, pr)
		cr, d := pr.Crossover, pr.DeltaSE
		rep.Models[i].Crossover, rep.Models[i].DeltaSE = &cr, &d
	}
	rep.BaseOnly = rep.Pairs[0].BaseOnly

	sets, err := passk.Solved(models[0], models[1])
	if err != nil {
		return nil, err
	}
	region := make([]string, len(kept))
	for _, i := range sets.BothProblems {
		region[i] = "both"
	}
	for _, i := range sets.BaseOnlyProblems {
		region[i] = "base-only"
	}
	for _, i := range sets.OtherOnlyProblems {
		region[i] = "other-only"
	}
	for _, i := range sets.NeitherProblems {
		region[i] = "neither"
	}
	rep.Rows = make([]ProblemRow, len(kept))
	for j, p := range kept {
		row := ProblemRow{ProblemID: p.ID, Key: p.Key, Idx: p.Idx, Subject: p.Subject, Level: p.Level, Region: region[j]}
		for i := range models {
			row.Counts = append(row.Counts, models[i][j])
		}
		rep.Rows[j] = row
	}
	return rep, nil
}

func modelReport(r store.Run, cs []passk.Count) (ModelReport, error) {
	m := ModelReport{RunID: r.ID, Name: r.ModelName, Role: r.Role, Step: r.Step, VerdictSource: r.VerdictSource, HasTexts: r.HasTexts}
	curve, err := passk.CurveAll(cs)
	if err != nil {
		return m, err
	}
	m.N = len(curve)
	m.PassAtK = make([]Point, len(curve))
	for k, v := range curve {
		m.PassAtK[k] = Point{K: k + 1, Value: v}
	}
	m.Pass1, m.PassN = curve[0], curve[len(curve)-1]
	for _, x := range cs {
		if x.C >= 1 {
			m.Solved++
		}
	}
	bins, err := passk.Histogram(cs, HistogramBins)
	if err != nil {
		return m, err
	}
	for _, b := range bins {
		m.Histogram = append(m.Histogram, HistogramBin{Label: b.Label, Lo: b.Lo, Hi: b.Hi, Count: b.Count})
	}
	return m, nil
}

func pairReport(base, other ModelReport, bc, oc []passk.Count, kept []store.Problem, kmax int) (PairReport, error) {
	pr := PairReport{Base: base.Name, Other: other.Name}
	ks := passk.AllKs(kmax)
	bv, ov := make([]float64, kmax), make([]float64, kmax)
	for k := range kmax {
		bv[k], ov[k] = base.PassAtK[k].Value, other.PassAtK[k].Value
	}
	cr, err := passk.Crossover(ks, bv, ov)
	if err != nil {
		return pr, err
	}
	pr.Crossover = Crossover{Found: cr.Found, K: cr.K, AtSampledK: cr.AtSampledK}
	switch {
	case !cr.Found:
		pr.Crossover.Label = fmt.Sprintf("no crossover up to k = %d", kmax)
	case cr.K <= 1:
		pr.Crossover.Label = "base at or above from k = 1"
	default:
		pr.Crossover.Label = fmt.Sprintf("k* ≈ %.1f", cr.K)
	}
	pr.DeltaSEK = min(deltaSEK, kmax)
	if pr.DeltaSE, err = passk.SamplingEfficiencyGap(bv, ov, pr.DeltaSEK); err != nil {
		return pr, err
	}
	sets, err := passk.Solved(bc, oc)
	if err != nil {
		return pr, err
	}
	pr.Solved = Solved{Both: sets.Both, BaseOnly: sets.BaseOnly, OtherOnly: sets.OtherOnly, Neither: sets.Neither}
	pr.BaseOnly = keys(kept, sets.BaseOnlyProblems)
	pr.OtherOnly = keys(kept, sets.OtherOnlyProblems)
	return pr, nil
}

func keys(ps []store.Problem, idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = ps[j].Key
	}
	return out
}

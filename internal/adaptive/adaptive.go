// Package adaptive plans adaptive sampling for a pass@k comparison: which (model, problem)
// cells get more samples, round by round, so that a budget well below a uniform design's
// models × problems × n still pins down the pass@k curves, the crossover and the solved sets.
//
// The design: a pilot round gives every cell Pilot samples; then each round gives Round more
// samples to the cells where they most reduce the expected posterior variance of pass@k over
// the curve's ks (powers of two up to Target, and Target), under each model's fitted
// passk.Prior. The reduction is computed exactly over the predictive distribution of the next
// Round outcomes (a preposterior analysis). Cells whose answer is settled (all correct, or
// enough correct that pass@k at the curve's ks is ≈ 1) score near zero and stop early; cells
// with no or few correct samples keep drawing, since a rare success moves pass@k at large k
// most. No cell goes past Target samples. The design ends when the budget is spent or no cell
// would change the figures. Adaptive stopping leaves the likelihood unchanged, so the fitted
// priors stay valid; it does bias the unbiased estimator on cells that stopped early, and
// passk.Beyond, which estimates the curves after, carries that bias in its intervals.
//
// Everything here is pure: counts in, allocations out.
package adaptive

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/reach-lab/reach/internal/passk"
)

// Options sets the design. Budget counts every sample over all models and problems, including
// the ones already drawn.
type Options struct {
	Target int // the n of the uniform design: the curve's largest k and every cell's cap, >= 2
	Budget int // total samples; 0 = Target × cells (no saving)
	Pilot  int // samples per cell in the pilot round; 0 = DefaultPilot, capped so the pilot takes at most half the budget
	Round  int // samples a chosen cell gets in one later round; 0 = DefaultRound
}

// DefaultPilot and DefaultRound are Options' defaults.
const (
	DefaultPilot = 16
	DefaultRound = 8
)

// ErrInput is wrapped by every error for invalid options or counts.
var ErrInput = errors.New("adaptive: invalid input")

// Settled is the expected reduction of summed posterior variance per sample below which a cell
// is not worth sampling: 1e-6 is a thousandth of a point of pass@k's standard deviation
// squared, summed over the curve's ks.
const Settled = 1e-6

func (o Options) normalized(cells int) (Options, error) {
	if o.Target < 2 {
		return o, fmt.Errorf("%w: target n = %d, need at least 2", ErrInput, o.Target)
	}
	if cells == 0 {
		return o, fmt.Errorf("%w: no problems", ErrInput)
	}
	uniform := o.Target * cells
	if o.Budget == 0 {
		o.Budget = uniform
	}
	if o.Budget < 2*cells || o.Budget > uniform {
		return o, fmt.Errorf("%w: budget %d samples: need between 2 per model and problem (%d) and the uniform design's %d",
			ErrInput, o.Budget, 2*cells, uniform)
	}
	if o.Pilot == 0 {
		o.Pilot = DefaultPilot
	}
	o.Pilot = max(2, min(o.Pilot, o.Target, o.Budget/(2*cells)))
	if o.Round == 0 {
		o.Round = DefaultRound
	}
	if o.Round < 1 {
		return o, fmt.Errorf("%w: round = %d", ErrInput, o.Round)
	}
	return o, nil
}

// CurveKs returns the ks the design watches: 1, 2, 4, … below target, and target.
func CurveKs(target int) []int {
	var ks []int
	for k := 1; k < target; k *= 2 {
		ks = append(ks, k)
	}
	return append(ks, target)
}

func shape(counts [][]passk.Count) (cells, drawn int, err error) {
	if len(counts) == 0 {
		return 0, 0, fmt.Errorf("%w: no models", ErrInput)
	}
	for m, cs := range counts {
		if len(cs) != len(counts[0]) {
			return 0, 0, fmt.Errorf("%w: model %d has %d problems, model 0 has %d", ErrInput, m, len(cs), len(counts[0]))
		}
		for i, x := range cs {
			if x.N < 0 || x.C < 0 || x.C > x.N {
				return 0, 0, fmt.Errorf("%w: model %d problem %d: n = %d, c = %d", ErrInput, m, i, x.N, x.C)
			}
			drawn += x.N
		}
		cells += len(cs)
	}
	return cells, drawn, nil
}

// Next returns how many more samples each cell gets in the next round: more[m][i] for model m,
// problem i, given the counts so far (counts[m][i], N = 0 for a cell not drawn yet). While any
// cell is below the pilot size the round completes the pilot (in problem order when the budget
// cannot cover it). All zero means the design is done. Errors (wrapping ErrInput) for ragged or
// invalid counts and options (see Options).
func Next(counts [][]passk.Count, opt Options) ([][]int, error) {
	cells, drawn, err := shape(counts)
	if err != nil {
		return nil, err
	}
	if opt, err = opt.normalized(cells); err != nil {
		return nil, err
	}
	more := make([][]int, len(counts))
	for m := range more {
		more[m] = make([]int, len(counts[m]))
	}
	remaining := opt.Budget - drawn
	if remaining <= 0 {
		return more, nil
	}
	// The pilot round.
	pilot := false
	for i := range counts[0] {
		for m := range counts {
			if d := opt.Pilot - counts[m][i].N; d > 0 && remaining > 0 {
				d = min(d, remaining)
				more[m][i], remaining, pilot = d, remaining-d, true
			}
		}
	}
	if pilot {
		return more, nil
	}

	ks := CurveKs(opt.Target)
	type cand struct {
		m, i, add int
		score     float64 // expected variance reduction per sample
	}
	var cands []cand
	for m, cs := range counts {
		prior, err := passk.FitPrior(cs)
		if err != nil {
			return nil, fmt.Errorf("model %d: %w", m, err)
		}
		for i, x := range cs {
			add := min(opt.Round, opt.Target-x.N)
			if add <= 0 {
				continue
			}
			red := passk.VarianceReduction(x, add, ks, prior)
			if s := red / float64(add); s >= Settled {
				cands = append(cands, cand{m, i, add, s})
			}
		}
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].score > cands[b].score })
	// A round spends a quarter of what is left (at least one cell's share, at least a
	// sixteenth of the cells' worth): few enough rounds to keep the sampler busy, small
	// enough that each round learns from the last.
	round := min(remaining, max(remaining/4, opt.Round*cells/16, opt.Round))
	for _, c := range cands {
		if round <= 0 {
			break
		}
		add := min(c.add, round)
		more[c.m][c.i] = add
		round -= add
	}
	return more, nil
}

// Status describes where an adaptive design stands.
type Status struct {
	Drawn   int // samples drawn so far over every model and problem
	Budget  int
	Uniform int // samples a uniform design at Target would draw: Target × models × problems
	// Widest is, per model, the widest 95% interval (passk.Beyond's Hi − Lo) of its
	// pass@k over the curve's ks, in [0, 1]; nil for a model with a cell not yet drawn.
	Widest []*float64
	Done   bool // Next would allocate nothing
}

// Summarize reports the design's state from the counts so far. Errors as Next's.
func Summarize(counts [][]passk.Count, opt Options) (Status, error) {
	cells, drawn, err := shape(counts)
	if err != nil {
		return Status{}, err
	}
	if opt, err = opt.normalized(cells); err != nil {
		return Status{}, err
	}
	st := Status{Drawn: drawn, Budget: opt.Budget, Uniform: opt.Target * cells, Widest: make([]*float64, len(counts))}
	ks := CurveKs(opt.Target)
	for m, cs := range counts {
		if slices.ContainsFunc(cs, func(x passk.Count) bool { return x.N == 0 }) {
			continue
		}
		prior, err := passk.FitPrior(cs)
		if err != nil {
			return st, fmt.Errorf("model %d: %w", m, err)
		}
		b, err := passk.Beyond(cs, ks, prior)
		if err != nil {
			return st, fmt.Errorf("model %d: %w", m, err)
		}
		w := 0.0
		for j := range ks {
			w = max(w, b.Hi[j]-b.Lo[j])
		}
		st.Widest[m] = &w
	}
	more, err := Next(counts, opt)
	if err != nil {
		return st, err
	}
	st.Done = !slices.ContainsFunc(more, func(r []int) bool { return slices.ContainsFunc(r, func(v int) bool { return v > 0 }) })
	return st, nil
}

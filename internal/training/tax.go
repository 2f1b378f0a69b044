package training

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/reach-lab/reach/internal/passk"
)

// Tax is one model's sharpening tax at K (Oh et al. 2026): how far its
// pass@k curve stays below pass@K on the way there,
//
//	A(K) = Σ_{k=1}^{K−1} [pass@K − pass@k]
//
// (the area between the curve and its end, in units of k), and the same
// normalised by its largest possible value given pass@1,
//
//	S(K) = A(K) / ((K−1)(1 − pass@1))   in [0, 1],
//
// undefined (HasS false) when pass@1 = 1 or K = 1. A sharpened model
// (RL) has pass@k close to pass@K from small k: small A. Problems are
// split by their counts: always solved (c = n), solved given enough
// samples (0 < c < n) and never solved (c = 0).
type Tax struct {
	K      int     `json:"k"`
	A      float64 `json:"area"`
	S      float64 `json:"normalized"`
	HasS   bool    `json:"has_normalized"`
	Always int     `json:"always_solved"`
	Enough int     `json:"solved_given_enough_samples"`
	Never  int     `json:"never_solved"`
}

// perProblemTax returns each problem's a_i = Σ_{k<K} [p_i(K) − p_i(k)] and
// p_i(1) (the unbiased estimator, Chen et al. 2021): A(K) is the mean of
// a_i, since pass@k is the mean of p_i(k).
func perProblemTax(counts []passk.Count, K int) (a, p1 []float64, err error) {
	ks := make([]int, K)
	for i := range ks {
		ks[i] = i + 1
	}
	m, err := passk.PerProblemMatrix(counts, ks)
	if err != nil {
		return nil, nil, err
	}
	a, p1 = make([]float64, len(m)), make([]float64, len(m))
	for i, row := range m {
		for k := 0; k < K-1; k++ {
			a[i] += row[K-1] - row[k]
		}
		p1[i] = row[0]
	}
	return a, p1, nil
}

// SharpeningTax computes Tax at K (1 ≤ K ≤ every problem's n) from one
// model's counts. Errors: no counts, K out of range.
func SharpeningTax(counts []passk.Count, K int) (Tax, error) {
	a, p1, err := perProblemTax(counts, K)
	if err != nil {
		return Tax{}, fmt.Errorf("sharpening tax: %w", err)
	}
	t := Tax{K: K}
	t.A = mean(a)
	if d := float64(K-1) * (1 - mean(p1)); d > 1e-12 {
		t.S, t.HasS = t.A/d, true
	}
	for _, x := range counts {
		switch {
		case x.C == 0:
			t.Never++
		case x.C == x.N:
			t.Always++
		default:
			t.Enough++
		}
	}
	return t, nil
}

// TaxDiff is base − other of A(K) and S(K) with paired bootstrap 95 %
// intervals (problems resampled with replacement, the same draw for both
// models; percentile intervals).
type TaxDiff struct {
	K           int     `json:"k"`
	A, ALo, AHi float64 `json:"-"`
	S, SLo, SHi float64 `json:"-"`
	HasS        bool    `json:"-"`
	Draws       int     `json:"draws"`
	Seed        uint64  `json:"seed"`
}

// SharpeningTaxDiff is the base model's tax minus the other model's at K,
// with paired bootstrap intervals from draws resamples (seeded: the same
// seed gives the same interval). base and other hold the same problems in
// the same order. Errors as SharpeningTax's, or different lengths.
func SharpeningTaxDiff(base, other []passk.Count, K, draws int, seed uint64) (TaxDiff, error) {
	if len(base) != len(other) {
		return TaxDiff{}, fmt.Errorf("sharpening tax difference: %d and %d problems", len(base), len(other))
	}
	ab, pb, err := perProblemTax(base, K)
	if err != nil {
		return TaxDiff{}, fmt.Errorf("sharpening tax difference: base model: %w", err)
	}
	ao, po, err := perProblemTax(other, K)
	if err != nil {
		return TaxDiff{}, fmt.Errorf("sharpening tax difference: %w", err)
	}
	s := func(a, p []float64, idx []int) (float64, bool) {
		var sa, sp float64
		for _, i := range idx {
			sa += a[i]
			sp += p[i]
		}
		n := float64(len(idx))
		d := float64(K-1) * (1 - sp/n)
		if d <= 1e-12 {
			return 0, false
		}
		return sa / n / d, true
	}
	all := make([]int, len(ab))
	for i := range all {
		all[i] = i
	}
	d := TaxDiff{K: K, Draws: draws, Seed: seed, A: mean(ab) - mean(ao)}
	sb, okb := s(ab, pb, all)
	so, oko := s(ao, po, all)
	d.S, d.HasS = sb-so, okb && oko
	if draws < 2 || len(all) == 0 {
		d.ALo, d.AHi, d.SLo, d.SHi = d.A, d.A, d.S, d.S
		return d, nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x7a78))
	as, ss := make([]float64, 0, draws), make([]float64, 0, draws)
	idx := make([]int, len(all))
	for range draws {
		var sum float64
		for j := range idx {
			idx[j] = rng.IntN(len(all))
			sum += ab[idx[j]] - ao[idx[j]]
		}
		as = append(as, sum/float64(len(idx)))
		if d.HasS {
			x, ok1 := s(ab, pb, idx)
			y, ok2 := s(ao, po, idx)
			if ok1 && ok2 {
				ss = append(ss, x-y)
			}
		}
	}
	d.ALo, d.AHi = percentile(as, 0.025), percentile(as, 0.975)
	if len(ss) > 0 {
		d.SLo, d.SHi = percentile(ss, 0.025), percentile(ss, 0.975)
	}
	return d, nil
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// percentile is the q-quantile of xs by linear interpolation (sorts xs).
func percentile(xs []float64, q float64) float64 {
	slices.Sort(xs)
	pos := q * float64(len(xs)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(xs)-1)
	return xs[lo] + (pos-float64(lo))*(xs[hi]-xs[lo])
}

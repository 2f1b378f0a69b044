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

// taxRows returns, per distinct count of counts (classes in first-seen
// order), a = Σ_{k<K} [p(K) − p(k)] and p(1) of a problem with that count
// (the unbiased estimator, Chen et al. 2021), and each problem's class: A(K)
// is the mean of a over problems, since pass@k is the mean of p(k). Rows are
// computed once per distinct count, so a million problems with few counts
// cost what a few do.
func taxRows(counts []passk.Count, K int) (a, p1 []float64, classOf []int, err error) {
	ks := make([]int, K)
	for i := range ks {
		ks[i] = i + 1
	}
	ids := map[passk.Count]int{}
	var distinct []passk.Count
	classOf = make([]int, len(counts))
	for i, x := range counts {
		c, ok := ids[x]
		if !ok {
			c = len(distinct)
			ids[x] = c
			distinct = append(distinct, x)
		}
		classOf[i] = c
	}
	if len(distinct) == 0 {
		_, err = passk.PerProblemMatrix(counts, ks) // says what is wrong with no counts
		if err == nil {
			err = fmt.Errorf("%w: no problems", passk.ErrInput)
		}
		return nil, nil, nil, err
	}
	m, err := passk.PerProblemMatrix(distinct, ks)
	if err != nil {
		return nil, nil, nil, err
	}
	a, p1 = make([]float64, len(m)), make([]float64, len(m))
	for i, row := range m {
		for k := 0; k < K-1; k++ {
			a[i] += row[K-1] - row[k]
		}
		p1[i] = row[0]
	}
	return a, p1, classOf, nil
}

// SharpeningTax computes Tax at K (1 ≤ K ≤ every problem's n) from one
// model's counts. Errors: no counts, K out of range.
func SharpeningTax(counts []passk.Count, K int) (Tax, error) {
	a, p1, classOf, err := taxRows(counts, K)
	if err != nil {
		return Tax{}, fmt.Errorf("sharpening tax: %w", err)
	}
	var sa, sp float64
	for _, c := range classOf {
		sa += a[c]
		sp += p1[c]
	}
	n := float64(len(classOf))
	t := Tax{K: K}
	t.A = sa / n
	if d := float64(K-1) * (1 - sp/n); d > 1e-12 {
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
	K int `json:"k"`
	// A: base − other of A(K), with its interval [ALo, AHi].
	A   float64 `json:"a"`
	ALo float64 `json:"a_lo"`
	AHi float64 `json:"a_hi"`
	// S: base − other of S(K) when both are defined (HasS), else 0.
	HasS  bool    `json:"has_s"`
	S     float64 `json:"s"`
	SLo   float64 `json:"s_lo"`
	SHi   float64 `json:"s_hi"`
	Draws int     `json:"draws"`
	Seed  uint64  `json:"seed"`
}

// SharpeningTaxDiff is the base model's tax minus the other model's at K,
// with paired bootstrap intervals from draws resamples (seeded: the same
// seed gives the same interval). base and other hold the same problems in
// the same order. A problem enters only through its pair of counts, so the
// resamples are drawn over the distinct pairs (passk.Resampler). Errors as
// SharpeningTax's, or different lengths.
func SharpeningTaxDiff(base, other []passk.Count, K, draws int, seed uint64) (TaxDiff, error) {
	if len(base) != len(other) {
		return TaxDiff{}, fmt.Errorf("sharpening tax difference: %d and %d problems", len(base), len(other))
	}
	ab, pb, cb, err := taxRows(base, K)
	if err != nil {
		return TaxDiff{}, fmt.Errorf("sharpening tax difference: base model: %w", err)
	}
	ao, po, co, err := taxRows(other, K)
	if err != nil {
		return TaxDiff{}, fmt.Errorf("sharpening tax difference: %w", err)
	}
	// A type is a problem's (base class, other class).
	type pair struct{ b, o int }
	ids := map[pair]int{}
	var types []pair
	typeOf := make([]int, len(cb))
	for i := range cb {
		x := pair{cb[i], co[i]}
		t, ok := ids[x]
		if !ok {
			t = len(types)
			ids[x] = t
			types = append(types, x)
		}
		typeOf[i] = t
	}
	rs, err := passk.NewResampler(typeOf, len(types))
	if err != nil {
		return TaxDiff{}, fmt.Errorf("sharpening tax difference: %w", err)
	}
	// stat is A_base − A_other and S_base − S_other for type multiplicities w.
	stat := func(w []float64) (da, ds float64, okS bool) {
		var sab, spb, sao, spo, n float64
		for t, x := range w {
			if x == 0 {
				continue
			}
			p := types[t]
			sab += x * ab[p.b]
			spb += x * pb[p.b]
			sao += x * ao[p.o]
			spo += x * po[p.o]
			n += x
		}
		da = (sab - sao) / n
		db, dob := float64(K-1)*(1-spb/n), float64(K-1)*(1-spo/n)
		if db <= 1e-12 || dob <= 1e-12 {
			return da, 0, false
		}
		return da, sab/n/db - sao/n/dob, true
	}
	w := make([]float64, len(types))
	for t, f := range rs.Freq() {
		w[t] = float64(f)
	}
	d := TaxDiff{K: K, Draws: draws, Seed: seed}
	d.A, d.S, d.HasS = stat(w)
	if !d.HasS {
		d.S = 0
	}
	if draws < 2 {
		d.ALo, d.AHi, d.SLo, d.SHi = d.A, d.A, d.S, d.S
		return d, nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x7a78))
	as, ss := make([]float64, 0, draws), make([]float64, 0, draws)
	for range draws {
		rs.Draw(rng, w)
		x, y, ok := stat(w)
		as = append(as, x)
		if d.HasS && ok {
			ss = append(ss, y)
		}
	}
	d.ALo, d.AHi = percentile(as, 0.025), percentile(as, 0.975)
	if len(ss) > 0 {
		d.SLo, d.SHi = percentile(ss, 0.025), percentile(ss, 0.975)
	}
	return d, nil
}

// percentile is the q-quantile of xs by linear interpolation (sorts xs).
func percentile(xs []float64, q float64) float64 {
	slices.Sort(xs)
	pos := q * float64(len(xs)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(xs)-1)
	return xs[lo] + (pos-float64(lo))*(xs[hi]-xs[lo])
}

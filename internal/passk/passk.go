// Package passk holds Reach's statistics: the unbiased pass@k estimator and its curves, the
// base-vs-RL crossover point, the sampling-efficiency gap, solved sets, accuracy histograms,
// Cover@τ, maj@k, paired bootstrap intervals, Fisher's exact test and Holm's adjustment.
//
// Everything here is a pure function of per-problem counts (samples drawn n, samples correct c)
// or, for maj@k, of per-sample answer classes. Nothing does I/O; randomness only comes from an
// explicit seed. Problems are identified by their index in the input slices: callers that
// compare models align the slices by problem id first.
//
// Sources: Chen et al. 2021 (arXiv 2107.03374, the unbiased pass@k estimator); Yue et al. 2025
// (arXiv 2504.13837, crossover and sampling-efficiency gap); Efron & Tibshirani 1993 (percentile
// bootstrap); Fisher's exact test as in R's fisher.test; Holm 1979.
package passk

import (
	"errors"
	"fmt"
	"math"
)

// ErrInput is wrapped by every error this package returns for invalid arguments.
var ErrInput = errors.New("passk: invalid input")

// Count is one model's result on one problem: N samples drawn, C of them correct (0 <= C <= N).
type Count struct{ N, C int }

func (x Count) validate() error {
	if x.N < 1 {
		return fmt.Errorf("%w: n = %d, need n >= 1", ErrInput, x.N)
	}
	if x.C < 0 || x.C > x.N {
		return fmt.Errorf("%w: c = %d, need 0 <= c <= n = %d", ErrInput, x.C, x.N)
	}
	return nil
}

// PassAtK returns the unbiased estimate of pass@k for one problem with n samples of which c are
// correct (Chen et al. 2021, arXiv 2107.03374, eq. 1):
//
//	pass@k = 1 - C(n-c, k) / C(n, k) = 1 - prod_{i=n-c+1}^{n} (1 - k/i)
//
// The product is summed in log space (log1p) and turned back with expm1, so the result keeps
// full float64 relative precision even when it is tiny (e.g. n = 4096, c = 1, k = 1) and no
// binomial coefficient is ever formed. The result is in [0, 1]; it is exactly 0 for c = 0,
// exactly 1 when n-c < k, and c/n correctly rounded for k = 1. Errors (wrapping ErrInput) for n < 1, c < 0, c > n, k < 1, k > n.
func PassAtK(n, c, k int) (float64, error) {
	if err := (Count{n, c}).validate(); err != nil {
		return 0, fmt.Errorf("pass@%d: %w", k, err)
	}
	if k < 1 || k > n {
		return 0, fmt.Errorf("pass@%d: %w: need 1 <= k <= n = %d", k, ErrInput, n)
	}
	switch {
	case c == 0:
		return 0, nil
	case n-c < k:
		return 1, nil
	case k == 1:
		return float64(c) / float64(n), nil // exact: one rounding
	}
	var logq float64
	fk := float64(k)
	for i := n - c + 1; i <= n; i++ {
		logq += math.Log1p(-fk / float64(i))
	}
	return -math.Expm1(logq), nil
}

// PassAtKBiased returns 1 - (1 - c/n)^k, the plug-in estimator some papers use. It is biased
// (it underestimates pass@k; see Chen et al. 2021, section 2.1) and is offered only as a labelled
// alternative to PassAtK, never as Reach's default. Unlike PassAtK it accepts k > n. Errors for
// n < 1, c < 0, c > n, k < 1.
func PassAtKBiased(n, c, k int) (float64, error) {
	if err := (Count{n, c}).validate(); err != nil {
		return 0, fmt.Errorf("biased pass@%d: %w", k, err)
	}
	if k < 1 {
		return 0, fmt.Errorf("biased pass@%d: %w: need k >= 1", k, ErrInput)
	}
	if c == n {
		return 1, nil
	}
	return -math.Expm1(float64(k) * math.Log1p(-float64(c)/float64(n))), nil
}

// problemCurve writes pass@k for k = 1..len(dst) of one problem into dst (len(dst) <= n) using
// the ratio recurrence q(k+1) = q(k) * (n-c-k)/(n-k), q = C(n-c,k)/C(n,k), in log space: O(len(dst)).
func problemCurve(x Count, dst []float64) {
	n, c := x.N, x.C
	var logq float64
	for i := range dst {
		k := i + 1
		switch {
		case c == 0:
			dst[i] = 0
		case k > n-c:
			dst[i] = 1
		case k == 1:
			logq = math.Log1p(-float64(c) / float64(n))
			dst[i] = float64(c) / float64(n) // exact: one rounding
		default:
			logq += math.Log1p(-float64(c) / float64(n-k+1))
			dst[i] = -math.Expm1(logq)
		}
	}
}

// MinN returns the smallest N over counts (the largest k every problem supports), or an error if
// counts is empty or holds an invalid Count.
func MinN(counts []Count) (int, error) {
	if len(counts) == 0 {
		return 0, fmt.Errorf("%w: no problems", ErrInput)
	}
	nmin := math.MaxInt
	for i, x := range counts {
		if err := x.validate(); err != nil {
			return 0, fmt.Errorf("problem %d: %w", i, err)
		}
		nmin = min(nmin, x.N)
	}
	return nmin, nil
}

// PerProblemMatrix returns m with m[i][j] = pass@ks[j] of problem i (the unbiased estimator).
// ks must be non-empty, each in 1..min N. Cost O(len(counts) * max(ks)). It is the matrix the
// bootstrap resamples rows of; a model's curve is its column means.
func PerProblemMatrix(counts []Count, ks []int) ([][]float64, error) {
	nmin, err := MinN(counts)
	if err != nil {
		return nil, fmt.Errorf("per-problem pass@k: %w", err)
	}
	kmax, err := checkKs(ks, nmin)
	if err != nil {
		return nil, fmt.Errorf("per-problem pass@k: %w", err)
	}
	row := make([]float64, kmax)
	m := make([][]float64, len(counts))
	flat := make([]float64, len(counts)*len(ks))
	for i, x := range counts {
		problemCurve(x, row)
		m[i] = flat[i*len(ks) : (i+1)*len(ks) : (i+1)*len(ks)]
		for j, k := range ks {
			m[i][j] = row[k-1]
		}
	}
	return m, nil
}

// checkKs validates ks (non-empty, each 1 <= k <= nmax) and returns the largest.
func checkKs(ks []int, nmax int) (int, error) {
	if len(ks) == 0 {
		return 0, fmt.Errorf("%w: no k requested", ErrInput)
	}
	kmax := 0
	for _, k := range ks {
		if k < 1 || k > nmax {
			return 0, fmt.Errorf("%w: k = %d, need 1 <= k <= %d (smallest n)", ErrInput, k, nmax)
		}
		kmax = max(kmax, k)
	}
	return kmax, nil
}

// Curve returns the mean over problems of the unbiased pass@k at each k in ks (same order as ks).
// Each k must be in 1..min N. Cost O(len(counts) * max(ks)).
func Curve(counts []Count, ks []int) ([]float64, error) {
	m, err := PerProblemMatrix(counts, ks)
	if err != nil {
		return nil, fmt.Errorf("pass@k curve: %w", err)
	}
	out := make([]float64, len(ks))
	for _, row := range m {
		for j, v := range row {
			out[j] += v
		}
	}
	for j := range out {
		out[j] /= float64(len(counts))
	}
	return out, nil
}

// CurveAll returns the mean pass@k over problems for every k = 1..nmin (nmin = min N over the
// problems), indexed k-1. Cost O(len(counts) * nmin) via the ratio recurrence.
func CurveAll(counts []Count) ([]float64, error) {
	nmin, err := MinN(counts)
	if err != nil {
		return nil, fmt.Errorf("pass@k curve: %w", err)
	}
	out := make([]float64, nmin)
	row := make([]float64, nmin)
	for _, x := range counts {
		problemCurve(x, row)
		for j, v := range row {
			out[j] += v
		}
	}
	for j := range out {
		out[j] /= float64(len(counts))
	}
	return out, nil
}

// AllKs returns 1..n, the ks CurveAll evaluates.
func AllKs(n int) []int {
	ks := make([]int, n)
	for i := range ks {
		ks[i] = i + 1
	}
	return ks
}

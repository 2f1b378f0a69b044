package passk

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// fisherRelErr is R's fisher.test tolerance: tables whose probability is within a relative
// 1e-7 of the observed one count as "as extreme", so float noise cannot drop exact ties.
const fisherRelErr = 1 + 1e-7

// FisherExact returns the two-sided p-value of Fisher's exact test on the 2x2 table
//
//	            correct   wrong
//	model 1     c1        n1-c1
//	model 2     c2        n2-c2
//
// conditioning on the margins: the sum of the hypergeometric probabilities of all tables with
// those margins whose probability is at most the observed table's (times 1 + 1e-7, as R's
// fisher.test does). Probabilities are formed in log space with math.Lgamma and normalised by
// their sum, so large n (thousands) are fine. The result is in (0, 1]. Errors for n < 1 or c
// outside 0..n.
func FisherExact(c1, n1, c2, n2 int) (float64, error) {
	if err := (Count{n1, c1}).validate(); err != nil {
		return 0, fmt.Errorf("fisher exact test: first row: %w", err)
	}
	if err := (Count{n2, c2}).validate(); err != nil {
		return 0, fmt.Errorf("fisher exact test: second row: %w", err)
	}
	m := c1 + c2 // first column total
	lo, hi := max(0, m-n2), min(n1, m)
	logd := make([]float64, hi-lo+1)
	for x := lo; x <= hi; x++ {
		// log C(n1, x) + log C(n2, m-x); the constant log C(n1+n2, m) cancels on normalising.
		logd[x-lo] = lchoose(n1, x) + lchoose(n2, m-x)
	}
	top := slices.Max(logd)
	var total, extreme float64
	obs := math.Exp(logd[c1-lo] - top)
	for _, l := range logd {
		d := math.Exp(l - top)
		total += d
		if d <= obs*fisherRelErr {
			extreme += d
		}
	}
	return min(extreme/total, 1), nil
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// Holm returns Holm's (1979) step-down adjusted p-values, in the input order: with the m
// p-values sorted ascending p(1) <= … <= p(m), adj(i) = max_{j<=i} min(1, (m-j+1) p(j)). A
// hypothesis is rejected at family-wise level α when its adjusted p-value is <= α. Same result
// as R's p.adjust(p, "holm"). Errors for a p-value outside [0, 1] or NaN.
func Holm(ps []float64) ([]float64, error) {
	order := make([]int, len(ps))
	for i, p := range ps {
		if !(p >= 0 && p <= 1) {
			return nil, fmt.Errorf("holm: %w: p[%d] = %v", ErrInput, i, p)
		}
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ps[a], ps[b]) })
	out := make([]float64, len(ps))
	running := 0.0
	for rank, i := range order {
		running = max(running, min(1, float64(len(ps)-rank)*ps[i]))
		out[i] = running
	}
	return out, nil
}

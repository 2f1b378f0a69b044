package passk

import (
	"fmt"
	"math"
	"slices"
)

// NoAnswer is the Vote class of a sample from which no answer was extracted.
const NoAnswer = -1

// Vote is one sample's extracted answer for majority voting: Class identifies its
// answer-equivalence class within the problem (as grouped by the verifier; NoAnswer = -1 when
// nothing was extracted) and Correct whether that class is correct. All samples of one class
// must agree on Correct, and NoAnswer samples cannot be correct.
type Vote struct {
	Class   int
	Correct bool
}

// MajAtK returns the expected maj@k of one problem: the probability that, for a k-subset of its
// n = len(samples) samples drawn uniformly without replacement, the answer class with the most
// votes is unique (a tie for the most votes is not a majority, so it scores 0) and correct.
// NoAnswer samples take part in the draw but do not vote; a draw with no votes scores 0. This is
// the without-replacement analogue of the unbiased pass@k estimator: averaging it over problems
// is an unbiased estimate of maj@k for a k-sample vote.
//
// It is computed exactly (no Monte Carlo) by counting draws: for each correct class w with m_w
// samples and each winning tally t, the draws where w gets t votes and every other class at most
// t-1 number
//
//	C(m_w, t) * [z^(k-t)] (1+z)^U * prod_{j != w, m_j >= t} sum_{x<t} C(m_j, x) z^x
//
// where U counts the NoAnswer samples and those of classes too small to reach t (m_j < t), whose
// choices are unconstrained. Dividing by C(n, k) gives the probability. Coefficients are kept in
// scaled floating point with log-factorials (math.Lgamma), so large n do not overflow; the result
// is accurate to about 1e-12. Cost is about (#correct classes) * sum_t (#classes with >= t
// samples) * t * (k - t): fine for the tens to hundreds of samples maj@k is used with.
// Errors for k < 1, k > n, a class id < -1, or inconsistent Correct flags.
func MajAtK(samples []Vote, k int) (float64, error) {
	t, err := newTally(samples)
	if err != nil {
		return 0, fmt.Errorf("maj@%d: %w", k, err)
	}
	if k < 1 || k > t.n {
		return 0, fmt.Errorf("maj@%d: %w: need 1 <= k <= n = %d", k, ErrInput, t.n)
	}
	return t.majAtK(k), nil
}

// MajCurve returns the mean over problems of MajAtK at each k in ks (same order). Each k must be
// at most the smallest number of samples of any problem.
func MajCurve(problems [][]Vote, ks []int) ([]float64, error) {
	if len(problems) == 0 {
		return nil, fmt.Errorf("maj@k curve: %w: no problems", ErrInput)
	}
	tallies := make([]tally, len(problems))
	nmin := math.MaxInt
	for i, samples := range problems {
		t, err := newTally(samples)
		if err != nil {
			return nil, fmt.Errorf("maj@k curve: problem %d: %w", i, err)
		}
		tallies[i] = t
		nmin = min(nmin, t.n)
	}
	if _, err := checkKs(ks, nmin); err != nil {
		return nil, fmt.Errorf("maj@k curve: %w", err)
	}
	out := make([]float64, len(ks))
	for j, k := range ks {
		for _, t := range tallies {
			out[j] += t.majAtK(k)
		}
		out[j] /= float64(len(problems))
	}
	return out, nil
}

// MajAtKs returns MajAtK of one problem at each k in ks (same order), grouping the samples
// once: out[j] is bit for bit MajAtK(samples, ks[j]), so the mean over problems taken in
// MajCurve's order equals MajCurve. Errors as MajAtK's.
func MajAtKs(samples []Vote, ks []int) ([]float64, error) {
	t, err := newTally(samples)
	if err != nil {
		return nil, fmt.Errorf("maj@k: %w", err)
	}
	out := make([]float64, len(ks))
	for j, k := range ks {
		if k < 1 || k > t.n {
			return nil, fmt.Errorf("maj@%d: %w: need 1 <= k <= n = %d", k, ErrInput, t.n)
		}
		out[j] = t.majAtK(k)
	}
	return out, nil
}

// tally is one problem's votes grouped by class.
type tally struct {
	n        int    // samples, including NoAnswer
	noAnswer int    // NoAnswer samples
	sizes    []int  // samples per answer class
	correct  []bool // whether each class is correct
	logFact  []float64
}

func newTally(samples []Vote) (tally, error) {
	if len(samples) == 0 {
		return tally{}, fmt.Errorf("%w: no samples", ErrInput)
	}
	t := tally{n: len(samples)}
	index := map[int]int{}
	for i, s := range samples {
		switch {
		case s.Class < NoAnswer:
			return tally{}, fmt.Errorf("%w: sample %d has class %d", ErrInput, i, s.Class)
		case s.Class == NoAnswer && s.Correct:
			return tally{}, fmt.Errorf("%w: sample %d has no answer but is marked correct", ErrInput, i)
		case s.Class == NoAnswer:
			t.noAnswer++
			continue
		}
		j, ok := index[s.Class]
		if !ok {
			j = len(t.sizes)
			index[s.Class] = j
			t.sizes = append(t.sizes, 0)
			t.correct = append(t.correct, s.Correct)
		}
		if t.correct[j] != s.Correct {
			return tally{}, fmt.Errorf("%w: sample %d disagrees with earlier samples of class %d on correctness", ErrInput, i, s.Class)
		}
		t.sizes[j]++
	}
	t.logFact = make([]float64, t.n+1)
	for i := range t.logFact {
		t.logFact[i], _ = math.Lgamma(float64(i + 1))
	}
	return t, nil
}

// logBinom is log C(a, b) for 0 <= b <= a <= n.
func (t tally) logBinom(a, b int) float64 { return t.logFact[a] - t.logFact[b] - t.logFact[a-b] }

func (t tally) majAtK(k int) float64 {
	logTotal := t.logBinom(t.n, k)
	var p float64
	for w, mw := range t.sizes {
		if !t.correct[w] {
			continue
		}
		for win := 1; win <= min(mw, k); win++ {
			rest := k - win // samples drawn outside class w
			free := t.noAnswer
			poly := []float64{1} // scaled coefficients of the capped classes' product, degree <= rest
			var logScale float64
			for j, mj := range t.sizes {
				if j == w {
					continue
				}
				if mj < win {
					free += mj
					continue
				}
				poly, logScale = t.mulCapped(poly, logScale, mj, min(win-1, rest), rest)
			}
			for x, coef := range poly {
				if coef == 0 || rest-x > free {
					continue
				}
				p += coef * math.Exp(logScale+t.logBinom(free, rest-x)+t.logBinom(mw, win)-logTotal)
			}
		}
	}
	return min(p, 1)
}

// mulCapped multiplies poly (times e^logScale) by sum_{x=0}^{cap} C(m, x) z^x, truncating at
// degree maxDeg, and rescales so the largest coefficient is 1.
func (t tally) mulCapped(poly []float64, logScale float64, m, capX, maxDeg int) ([]float64, float64) {
	factor := make([]float64, capX+1)
	fmax := math.Inf(-1)
	for x := range factor {
		fmax = max(fmax, t.logBinom(m, x))
	}
	for x := range factor {
		factor[x] = math.Exp(t.logBinom(m, x) - fmax)
	}
	out := make([]float64, min(len(poly)-1+capX, maxDeg)+1)
	for i, a := range poly {
		if a == 0 {
			continue
		}
		for x, f := range factor {
			if i+x >= len(out) {
				break
			}
			out[i+x] += a * f
		}
	}
	top := slices.Max(out)
	if top == 0 {
		return out, logScale
	}
	for i := range out {
		out[i] /= top
	}
	return out, logScale + fmax + math.Log(top)
}

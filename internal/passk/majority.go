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
// samples) * t * min(n - t, (#classes with >= t samples) * t), whatever k (MajAtKs gives every
// k for that cost): a few milliseconds at n = 1,024 with a dozen large wrong-answer classes.
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
	for _, t := range tallies {
		for j, v := range t.majAtKs(ks) {
			out[j] += v
		}
	}
	for j := range out {
		out[j] /= float64(len(problems))
	}
	return out, nil
}

// MajAtKs returns MajAtK of one problem at each k in ks (same order) in one pass over the
// winning tallies: out[j] is bit for bit MajAtK(samples, ks[j]), so the mean over problems taken
// in problem order equals MajCurve. Errors as MajAtK's.
func MajAtKs(samples []Vote, ks []int) ([]float64, error) {
	t, err := newTally(samples)
	if err != nil {
		return nil, fmt.Errorf("maj@k: %w", err)
	}
	for _, k := range ks {
		if k < 1 || k > t.n {
			return nil, fmt.Errorf("maj@%d: %w: need 1 <= k <= n = %d", k, ErrInput, t.n)
		}
	}
	if len(ks) == 0 {
		return []float64{}, nil
	}
	return t.majAtKs(ks), nil
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

func (t tally) majAtK(k int) float64 { return t.majAtKs([]int{k})[0] }

// majAtKs is majAtK at each k of ks (each in 1..n) in one pass: for each
// correct class and winning tally, the product of the capped classes'
// polynomials is the same for every k (a larger k only reads a higher
// coefficient), so it is built once, up to degree n - tally. Building it
// to that degree whatever ks asks for makes each value a function of the
// samples and its k alone, so values computed in different calls agree to
// the bit.
func (t tally) majAtKs(ks []int) []float64 {
	out := make([]float64, len(ks))
	kmax := slices.Max(ks)
	logTotal := make([]float64, len(ks))
	for i, k := range ks {
		logTotal[i] = t.logBinom(t.n, k)
	}
	var m mulBuf
	for w, mw := range t.sizes {
		if !t.correct[w] {
			continue
		}
		for win := 1; win <= min(mw, kmax); win++ {
			maxRest := t.n - win // the most samples a draw can take outside class w
			free := t.noAnswer
			poly := append(m.poly[:0], 1) // scaled coefficients of the capped classes' product, degree <= maxRest
			var logScale float64
			for j, mj := range t.sizes {
				if j == w {
					continue
				}
				if mj < win {
					free += mj
					continue
				}
				poly, logScale = t.mulCapped(&m, poly, logScale, mj, min(win-1, maxRest), maxRest)
			}
			m.poly = poly
			logWin := t.logBinom(mw, win)
			for i, k := range ks {
				rest := k - win // samples drawn outside class w
				if rest < 0 {
					continue
				}
				for x, coef := range poly[:min(len(poly), rest+1)] {
					if coef == 0 || rest-x > free {
						continue
					}
					out[i] += coef * math.Exp(logScale+t.logBinom(free, rest-x)+logWin-logTotal[i])
				}
			}
		}
	}
	for i := range out {
		out[i] = min(out[i], 1)
	}
	return out
}

// mulBuf holds majAtKs's scratch polynomials, reused across tallies.
type mulBuf struct{ poly, out, factor []float64 }

// mulCapped multiplies poly (times e^logScale) by sum_{x=0}^{cap} C(m, x) z^x, truncating at
// degree maxDeg, and rescales so the largest coefficient is 1. The result lives in one of b's
// buffers (poly's storage may be reused for the next call).
func (t tally) mulCapped(b *mulBuf, poly []float64, logScale float64, m, capX, maxDeg int) ([]float64, float64) {
	factor := slices.Grow(b.factor[:0], capX+1)[:capX+1]
	fmax := math.Inf(-1)
	for x := range factor {
		factor[x] = t.logBinom(m, x)
		fmax = max(fmax, factor[x])
	}
	for x, l := range factor {
		factor[x] = math.Exp(l - fmax)
	}
	b.factor = factor
	n := min(len(poly)-1+capX, maxDeg) + 1
	out := slices.Grow(b.out[:0], n)[:n]
	clear(out)
	for i, a := range poly {
		if a == 0 {
			continue
		}
		o := out[i:min(i+len(factor), n)]
		for x := range o {
			o[x] += a * factor[x]
		}
	}
	b.out = poly // the caller's input becomes the next output buffer
	top := slices.Max(out)
	if top == 0 {
		return out, logScale
	}
	for i := range out {
		out[i] /= top
	}
	return out, logScale + fmax + math.Log(top)
}

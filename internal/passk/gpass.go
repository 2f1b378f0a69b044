package passk

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// logChoose is ln C(n, k) for 0 ≤ k ≤ n (math.Lgamma, so large n do not
// overflow).
func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// AtLeast is P(X ≥ m) for X ~ Hypergeometric(n, c, k): the chance that at
// least m of k samples drawn without replacement from n, of which c are
// correct, are correct. 0 when m > min(c, k); 1 when m ≤ 0 and k ≤ n.
// Errors: n < 1, c outside 0..n, k outside 1..n.
func AtLeast(n, c, k, m int) (float64, error) {
	if n < 1 || c < 0 || c > n || k < 1 || k > n {
		return 0, fmt.Errorf("%w: n = %d, c = %d, k = %d", ErrInput, n, c, k)
	}
	if m > min(c, k) {
		return 0, nil
	}
	floor := max(0, k-(n-c)) // every draw has at least this many correct
	if m <= floor {
		return 1, nil
	}
	lo := m
	total := logChoose(n, k)
	var p float64
	for j := lo; j <= min(c, k); j++ {
		p += math.Exp(logChoose(c, j) + logChoose(n-c, k-j) - total)
	}
	return min(p, 1), nil
}

// GPassAtK is G-Pass@k_τ of one problem (Liu et al. 2024, "Are Your LLMs
// Capable of Stable Reasoning?", arXiv 2412.13147): the chance that at
// least ⌈τ·k⌉ (at least 1) of k samples drawn without replacement from
// the problem's n, c of them correct, are correct; τ in [0, 1]. τ = 0 is
// pass@k and τ = 1 is pass^k (all k correct). As lighteval's and
// OpenCompass's G-Pass@k compute it. Errors as AtLeast's, τ outside [0, 1].
func GPassAtK(n, c, k int, tau float64) (float64, error) {
	if tau < 0 || tau > 1 || math.IsNaN(tau) {
		return 0, fmt.Errorf("%w: τ = %v, want 0 ≤ τ ≤ 1", ErrInput, tau)
	}
	return AtLeast(n, c, k, max(int(math.Ceil(float64(k)*tau)), 1))
}

// MGPassAtK is mG-Pass@k of one problem (Liu et al. 2024): G-Pass@k
// averaged over τ in (0.5, 1], as (2/k)·Σ_{i=⌈k/2⌉+1}^{k} P(X ≥ i)
// (0 for k = 1, an empty sum, as in lighteval and OpenCompass).
func MGPassAtK(n, c, k int) (float64, error) {
	if _, err := AtLeast(n, c, k, 1); err != nil {
		return 0, err
	}
	var s float64
	for i := int(math.Ceil(float64(k)*0.5)) + 1; i <= k; i++ {
		p, _ := AtLeast(n, c, k, i)
		s += p
	}
	return 2 * s / float64(k), nil
}

// Tails returns t with t[m] = P(X ≥ m) for m = 0 … k+1, X ~
// Hypergeometric(n, c, k) (AtLeast for every m at once, in O(k): the
// probabilities by the ratio of consecutive terms, in logs so that none
// underflows at n = 1,024). Errors as AtLeast's.
func Tails(n, c, k int) ([]float64, error) {
	if n < 1 || c < 0 || c > n || k < 1 || k > n {
		return nil, fmt.Errorf("%w: n = %d, c = %d, k = %d", ErrInput, n, c, k)
	}
	t := make([]float64, k+2)
	lo, hi := max(0, k-(n-c)), min(c, k)
	lp := logChoose(c, lo) + logChoose(n-c, k-lo) - logChoose(n, k)
	pmf := make([]float64, hi-lo+1)
	for j := lo; j <= hi; j++ {
		pmf[j-lo] = math.Exp(lp)
		if j < hi {
			lp += math.Log(float64(c-j)) + math.Log(float64(k-j)) - math.Log(float64(j+1)) - math.Log(float64(n-c-k+j+1))
		}
	}
	var s float64
	for m := k + 1; m >= 0; m-- {
		if m >= lo && m <= hi {
			s += pmf[m-lo]
		}
		t[m] = min(s, 1)
	}
	for m := 0; m <= lo; m++ {
		t[m] = 1 // every draw has at least lo correct
	}
	return t, nil
}

// GPassCurve returns, for each k in ks (each 1 ≤ k ≤ every problem's n)
// and each τ in taus, the mean G-Pass@k_τ over problems (gpass[i][j] for
// ks[i], taus[j]) and the mean mG-Pass@k (mg[i]): Liu et al. 2024's
// figures for a model, as lighteval and OpenCompass average them.
func GPassCurve(counts []Count, ks []int, taus []float64) (gpass [][]float64, mg []float64, err error) {
	if len(counts) == 0 {
		return nil, nil, fmt.Errorf("%w: no problems", ErrInput)
	}
	for _, tau := range taus {
		if tau < 0 || tau > 1 || math.IsNaN(tau) {
			return nil, nil, fmt.Errorf("%w: τ = %v, want 0 ≤ τ ≤ 1", ErrInput, tau)
		}
	}
	gpass, mg = make([][]float64, len(ks)), make([]float64, len(ks))
	for i, k := range ks {
		gpass[i] = make([]float64, len(taus))
		for _, x := range counts {
			tl, err := Tails(x.N, x.C, k)
			if err != nil {
				return nil, nil, fmt.Errorf("G-Pass@%d: %w", k, err)
			}
			for j, tau := range taus {
				gpass[i][j] += tl[max(int(math.Ceil(float64(k)*tau)), 1)]
			}
			var s float64
			for m := int(math.Ceil(float64(k)*0.5)) + 1; m <= k; m++ {
				s += tl[m]
			}
			mg[i] += 2 * s / float64(k)
		}
		for j := range taus {
			gpass[i][j] /= float64(len(counts))
		}
		mg[i] /= float64(len(counts))
	}
	return gpass, mg, nil
}

// GPassBands are percentile-bootstrap intervals of GPassCurve's figures: Lo[i][j] and Hi[i][j]
// for ks[i] and taus[j], MGLo[i] and MGHi[i] for mG-Pass@ks[i].
type GPassBands struct {
	Lo, Hi     [][]float64
	MGLo, MGHi []float64
	Draws      int
	Seed       uint64
	Level      float64
}

// gpassStream is the second PCG seed word of GPassBootstrap's draws.
const gpassStream = 0x67706173

// GPassBootstrap returns percentile-bootstrap intervals (Efron & Tibshirani 1993, ch. 13) of
// the mean G-Pass@k_τ and mG-Pass@k over problems (GPassCurve, Liu et al. 2024, arXiv
// 2412.13147): each of draws resamples the problems with replacement (Resampler, over distinct
// counts) and takes the means; the interval is the (1−level)/2 and (1+level)/2 quantiles of the
// draws (R's type 7). The estimand, as for Bootstrap's, is the mean over the population of
// problems the set was drawn from. Same seed, same result. draws ≥ 1, level in (0, 1); other
// errors as GPassCurve's.
func GPassBootstrap(counts []Count, ks []int, taus []float64, draws int, seed uint64, level float64) (GPassBands, error) {
	if draws < 1 || !(level > 0 && level < 1) {
		return GPassBands{}, fmt.Errorf("%w: draws = %d, level = %v", ErrInput, draws, level)
	}
	classes := map[Count]int{}
	var distinct []Count
	typeOf := make([]int, len(counts))
	for i, x := range counts {
		c, ok := classes[x]
		if !ok {
			c = len(distinct)
			classes[x] = c
			distinct = append(distinct, x)
		}
		typeOf[i] = c
	}
	nt, nf := len(taus), len(ks)*(len(taus)+1)
	rows := make([][]float64, len(distinct)) // [class][i*(nt+1)+j], j = nt: mG-Pass
	for c, x := range distinct {
		g, mg, err := GPassCurve([]Count{x}, ks, taus)
		if err != nil {
			return GPassBands{}, err
		}
		rows[c] = make([]float64, nf)
		for i := range ks {
			copy(rows[c][i*(nt+1):], g[i])
			rows[c][i*(nt+1)+nt] = mg[i]
		}
	}
	rs, err := NewResampler(typeOf, len(distinct))
	if err != nil {
		return GPassBands{}, err
	}
	vals := make([][]float64, nf) // [figure][draw]
	for f := range vals {
		vals[f] = make([]float64, draws)
	}
	r := rand.New(rand.NewPCG(seed, gpassStream))
	w := make([]float64, len(distinct))
	n := float64(len(counts))
	acc := make([]float64, nf)
	for d := range draws {
		rs.Draw(r, w)
		clear(acc)
		for c, x := range w {
			if x == 0 {
				continue
			}
			for f, v := range rows[c] {
				acc[f] += x * v
			}
		}
		for f, v := range acc {
			vals[f][d] = v / n
		}
	}
	lo, hi := (1-level)/2, (1+level)/2
	b := GPassBands{Draws: draws, Seed: seed, Level: level, MGLo: make([]float64, len(ks)), MGHi: make([]float64, len(ks))}
	for i := range ks {
		b.Lo, b.Hi = append(b.Lo, make([]float64, nt)), append(b.Hi, make([]float64, nt))
		for j := 0; j <= nt; j++ {
			v := vals[i*(nt+1)+j]
			slices.Sort(v)
			l, h := quantile(v, lo), quantile(v, hi)
			if j == nt {
				b.MGLo[i], b.MGHi[i] = l, h
			} else {
				b.Lo[i][j], b.Hi[i][j] = l, h
			}
		}
	}
	return b, nil
}

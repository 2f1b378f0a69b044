package passk

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat/distuv"
)

// Prior is a fitted distribution of a model's per-problem success rates p: with probability
// Zero p = 0 (the model never solves the problem), with probability One p = 1 (it always
// does), otherwise p ~ Beta(Alpha, Beta). It is the Beta-Binomial model of per-problem counts
// (Kazdan et al. 2025, arXiv 2510.05197, fit pass@k beyond the sampled n with it) with point
// masses at 0 and 1 added: benchmarks hold problems a model never solves and problems it
// always solves (MATH500: 16 and 176 of 500 for Qwen2.5-7B at n = 128), and a plain Beta puts
// mass near them that pulls pass@k at large k up and its intervals wide.
//
// It answers two questions the unbiased estimator cannot: pass@k for k above a problem's own n
// (the posterior mean of 1 − (1 − p)^k given the problem's count), and how far a curve may be
// from this problem set's true curve given finite samples (the posterior variance).
type Prior struct {
	Zero, One   float64 // point masses at p = 0 and p = 1, each in [0, 1), Zero + One < 1
	Alpha, Beta float64 // the Beta component's shape parameters, > 0
	LogLik      float64 // maximised log-likelihood of the counts (binomial coefficients left out)
	Problems    int     // problems the fit used
	Fit         GoodnessOfFit
}

// GoodnessOfFit says how well a fitted Prior describes the counts, in two ways.
//
// The χ² test bins problems by their observed rate c/n (0, five bins in between, 1) and
// compares each bin's count with the number the prior predicts for problems of those n (bins
// expecting fewer than 5 problems merged with a neighbour). With hundreds of problems it
// rejects any four-parameter family on real data (MATH500's base model: p < 1e-10 at n = 128)
// while the extrapolation stays within a fraction of a point, so it is reported, not acted on.
//
// The curve check is what extrapolation rests on: the prior's own pass@k curve (the mean of
// 1 − (1 − p)^k over the prior) against the unbiased curve of the counts at the largest sampled
// ks (n/4, n/2 and n for n the smallest n). A departure of more than PoorDeparture means the
// fitted shape misses how pass@k grows where the data ends, so values beyond it are suspect.
type GoodnessOfFit struct {
	Chi2 float64
	DF   int     // bins − 1 − 4 fitted parameters; 0 when too few bins remain to test
	P    float64 // upper tail of χ²(DF) at Chi2; 1 when DF = 0
	// Departure is the largest |prior curve − unbiased curve| at CheckKs, in [0, 1].
	Departure float64
	CheckKs   []int
	// Degenerate: every problem's count is 0 correct, or every one all correct. The fit then
	// says every rate is 0 (or 1) with certainty, which the counts cannot support.
	Degenerate bool
}

// PoorDeparture is the curve departure (in pass@k, 0.015 = 1.5 points) above which a fitted
// Prior is called a poor fit.
const PoorDeparture = 0.015

// Poor reports whether the prior's curve departs from the data's by more than PoorDeparture.
func (g GoodnessOfFit) Poor() bool { return g.Degenerate || g.Departure > PoorDeparture }

// z95 is the standard normal 0.975 quantile.
const z95 = 1.959963984540054

// lbeta is log B(a, b).
func lbeta(a, b float64) float64 {
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	return la + lb - lab
}

// logLik is log P(c | n) under the prior without the binomial coefficient (which is 1 for the
// point masses' only counts, c = 0 and c = n, so leaving it out changes no comparison).
func (p Prior) logLik(x Count) float64 {
	lb := math.Log1p(-p.Zero-p.One) + lbeta(p.Alpha+float64(x.C), p.Beta+float64(x.N-x.C)) - lbeta(p.Alpha, p.Beta)
	terms := []float64{lb}
	if x.C == 0 && p.Zero > 0 {
		terms = append(terms, math.Log(p.Zero))
	}
	if x.C == x.N && p.One > 0 {
		terms = append(terms, math.Log(p.One))
	}
	return logSumExp(terms)
}

func logSumExp(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = max(m, x)
	}
	if math.IsInf(m, -1) {
		return m
	}
	var s float64
	for _, x := range xs {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

// fromParams maps unconstrained optimiser coordinates to a prior: a softmax over (zero, one,
// beta) and log shapes clamped to [e^-7, e^9].
func fromParams(x []float64) Prior {
	a0, a1 := x[0], x[1]
	m := max(a0, a1, 0)
	e0, e1, eb := math.Exp(a0-m), math.Exp(a1-m), math.Exp(-m)
	s := e0 + e1 + eb
	clamp := func(v float64) float64 { return math.Exp(min(9, max(-7, v))) }
	return Prior{Zero: e0 / s, One: e1 / s, Alpha: clamp(x[2]), Beta: clamp(x[3])}
}

// FitPrior fits a Prior to one model's per-problem counts by maximum likelihood (Nelder–Mead
// over the four parameters from two starting points; counts are grouped by distinct (n, c), so
// the cost is O(distinct counts) per evaluation). Problems may have different n. Errors
// (wrapping ErrInput) for no counts or an invalid count.
func FitPrior(counts []Count) (Prior, error) { return fitPrior(counts, true) }

// FitBetaPrior fits the plain Beta-Binomial prior (Zero = One = 0; Kazdan et al. 2025) the same
// way. It puts the never-solved problems' mass near p = 0 rather than at it, so its pass@k grows
// faster past the sampled n than FitPrior's: on MATH500 thinned to n = 32 the base model's
// pass@128 comes out 1.5 points above the truth where FitPrior's is 2.1 below. The two bracket
// what the counts up to n cannot decide (see analysis.PastN). Errors as FitPrior's.
func FitBetaPrior(counts []Count) (Prior, error) { return fitPrior(counts, false) }

func fitPrior(counts []Count, inflated bool) (Prior, error) {
	if len(counts) == 0 {
		return Prior{}, fmt.Errorf("fit prior: %w: no problems", ErrInput)
	}
	mult := map[Count]int{}
	zeros, ones := 0, 0
	for i, x := range counts {
		if err := x.validate(); err != nil {
			return Prior{}, fmt.Errorf("fit prior: problem %d: %w", i, err)
		}
		mult[x]++
		if x.C == 0 {
			zeros++
		}
		if x.C == x.N {
			ones++
		}
	}
	type group struct {
		x Count
		m float64
	}
	groups := make([]group, 0, len(mult))
	for x, m := range mult {
		groups = append(groups, group{x, float64(m)})
	}
	slices.SortFunc(groups, func(a, b group) int { // a fixed order: the same fit every run
		if a.x.N != b.x.N {
			return a.x.N - b.x.N
		}
		return a.x.C - b.x.C
	})
	nmax := groups[len(groups)-1].x.N
	lgA, lgB, lgAB := make([]float64, nmax+1), make([]float64, nmax+1), make([]float64, nmax+1)
	params := func(x []float64) Prior {
		if !inflated { // two free parameters, no point masses
			p := fromParams([]float64{0, 0, x[len(x)-2], x[len(x)-1]})
			p.Zero, p.One = 0, 0
			return p
		}
		return fromParams(x)
	}
	negLL := func(x []float64) float64 {
		p := params(x)
		// log Γ(α + c), log Γ(β + f), log Γ(α + β + n) once per value, not once per group.
		for v := 0; v <= nmax; v++ {
			lgA[v], _ = math.Lgamma(p.Alpha + float64(v))
			lgB[v], _ = math.Lgamma(p.Beta + float64(v))
			lgAB[v], _ = math.Lgamma(p.Alpha + p.Beta + float64(v))
		}
		lb0 := lgA[0] + lgB[0] - lgAB[0]
		l0, l1, lw := math.Log(p.Zero), math.Log(p.One), math.Log1p(-p.Zero-p.One)
		var ll float64
		for _, g := range groups {
			c, n := g.x.C, g.x.N
			l := lw + lgA[c] + lgB[n-c] - lgAB[n] - lb0
			switch {
			case c == 0 && c == n:
				l = logSumExp([]float64{l, l0, l1})
			case c == 0:
				l = logSumExp([]float64{l, l0})
			case c == n:
				l = logSumExp([]float64{l, l1})
			}
			ll += g.m * l
		}
		if math.IsNaN(ll) || math.IsInf(ll, 0) {
			return math.MaxFloat64
		}
		return -ll
	}
	n := float64(len(counts))
	logit := func(share float64) float64 { return math.Log(max(share, 0.5/n) / 0.5) }
	starts := [][]float64{
		{logit(float64(zeros) / n / 2), logit(float64(ones) / n / 2), 0, 0},
		{-4, -4, -1, -1},
	}
	if !inflated {
		starts = [][]float64{{0, 0}, {-1, -1}}
	}
	best := Prior{LogLik: math.Inf(-1)}
	for _, x0 := range starts {
		res, err := optimize.Minimize(optimize.Problem{Func: negLL}, x0,
			&optimize.Settings{FuncEvaluations: 4000, Converger: &optimize.FunctionConverge{Absolute: 1e-7, Iterations: 40}},
			&optimize.NelderMead{})
		if err != nil && res == nil {
			continue
		}
		if ll := -res.F; ll > best.LogLik {
			best = params(res.X)
			best.LogLik = ll
		}
	}
	if math.IsInf(best.LogLik, -1) {
		return Prior{}, fmt.Errorf("fit prior: the likelihood could not be maximised")
	}
	best.Problems = len(counts)
	best.Fit = best.goodness(counts)
	best.Fit.Degenerate = zeros == len(counts) || ones == len(counts)
	nmin, _ := MinN(counts)
	for _, k := range []int{nmin / 4, nmin / 2, nmin} {
		if k >= 1 && !slices.Contains(best.Fit.CheckKs, k) {
			best.Fit.CheckKs = append(best.Fit.CheckKs, k)
		}
	}
	emp, err := Curve(counts, best.Fit.CheckKs)
	if err != nil {
		return Prior{}, fmt.Errorf("fit prior: %w", err)
	}
	q := best.posterior(Count{})
	for j, k := range best.Fit.CheckKs {
		m, _ := q.passMeanVar(k)
		best.Fit.Departure = max(best.Fit.Departure, math.Abs(m-emp[j]))
	}
	return best, nil
}

// posterior is one problem's posterior over p: weights of p = 0, p = 1 and the Beta(A, B)
// component.
type posterior struct {
	w0, w1, wb float64
	a, b       float64
}

// posterior conditions the prior on one problem's count (N = 0: the prior itself).
func (p Prior) posterior(x Count) posterior {
	c, f := float64(x.C), float64(x.N-x.C)
	lb := math.Log1p(-p.Zero-p.One) + lbeta(p.Alpha+c, p.Beta+f) - lbeta(p.Alpha, p.Beta)
	l0, l1 := math.Inf(-1), math.Inf(-1)
	if x.C == 0 && p.Zero > 0 {
		l0 = math.Log(p.Zero)
	}
	if x.C == x.N && p.One > 0 {
		l1 = math.Log(p.One)
	}
	z := logSumExp([]float64{lb, l0, l1})
	return posterior{w0: math.Exp(l0 - z), w1: math.Exp(l1 - z), wb: math.Exp(lb - z), a: p.Alpha + c, b: p.Beta + f}
}

// failMoment is E[(1 − p)^k] under the posterior (k >= 1).
func (q posterior) failMoment(k int) float64 {
	return q.w0 + q.wb*math.Exp(lbeta(q.a, q.b+float64(k))-lbeta(q.a, q.b))
}

// passMeanVar returns the posterior mean and variance of pass@k = 1 − (1 − p)^k.
func (q posterior) passMeanVar(k int) (mean, variance float64) {
	g1, g2 := q.failMoment(k), q.failMoment(2*k)
	return 1 - g1, max(0, g2-g1*g1)
}

// PassAtKBeyond returns one problem's pass@k estimate for any k >= 1: the unbiased estimator
// (PassAtK) when k <= n, otherwise the posterior mean of 1 − (1 − p)^k under prior given the
// problem's count. extrapolated reports the second case. Errors as PassAtK's for invalid counts
// or k < 1.
func PassAtKBeyond(x Count, k int, prior Prior) (value float64, extrapolated bool, err error) {
	if err := x.validate(); err != nil {
		return 0, false, fmt.Errorf("pass@%d: %w", k, err)
	}
	if k < 1 {
		return 0, false, fmt.Errorf("pass@%d: %w: need k >= 1", k, ErrInput)
	}
	if k <= x.N {
		v, err := PassAtK(x.N, x.C, k)
		return v, false, err
	}
	m, _ := prior.posterior(x).passMeanVar(k)
	return m, true, nil
}

// BeyondCurve is one model's pass@k over problems that may have different n, at any ks.
type BeyondCurve struct {
	Ks      []int
	PassAtK []float64 // mean over problems of PassAtKBeyond, in [0, 1]
	// Lo and Hi bound this problem set's true pass@k (the mean over its problems of
	// 1 − (1 − p_i)^k) with about 95% probability: the point estimate ± 1.96 × its root-mean-
	// square error, √(Σ Var_i + (Σ bias_i)² + δ'Σ_α δ) / P. The error is judged under a
	// flexible prior fitted to the same counts (Efron's g-model, see gModel), not under the
	// Prior the point estimate comes from, so that it includes that prior's extrapolation
	// error: Var_i is problem i's posterior variance, bias_i its estimate minus its posterior
	// mean (the unbiased estimator's too: adaptive stopping makes it biased, and the fitted
	// Prior's posterior mean beyond n can miss), and δ'Σ_α δ the delta-method variance of
	// Σ bias_i from estimating the g-model (Σ_α the covariance of its parameters). They do not
	// cover the choice of problems (the bootstrap over problems covers that).
	Lo, Hi []float64
	// Extrapolated is the share of problems whose value at Ks[j] is extrapolated (n < k).
	Extrapolated []float64
}

// Beyond computes a BeyondCurve of counts at ks (each >= 1, any order). Cost
// O(len(counts) · len(ks) · k) for the unbiased part, O(distinct counts · len(ks) · G) for the
// interval (G = 83 grid points) and one g-model fit (a few Newton steps of O(distinct counts ·
// G · 9) each). Errors (wrapping ErrInput) for no counts, an invalid count or k < 1.
func Beyond(counts []Count, ks []int, prior Prior) (BeyondCurve, error) {
	if len(counts) == 0 {
		return BeyondCurve{}, fmt.Errorf("pass@k beyond n: %w: no problems", ErrInput)
	}
	out := BeyondCurve{Ks: slices.Clone(ks), PassAtK: make([]float64, len(ks)), Lo: make([]float64, len(ks)),
		Hi: make([]float64, len(ks)), Extrapolated: make([]float64, len(ks))}
	for _, k := range ks {
		if k < 1 {
			return BeyondCurve{}, fmt.Errorf("pass@k beyond n: %w: k = %d", ErrInput, k)
		}
	}
	groups, err := groupCounts(counts)
	if err != nil {
		return BeyondCurve{}, fmt.Errorf("pass@k beyond n: %w", err)
	}
	gm, err := fitGModel(groups)
	if err != nil {
		return BeyondCurve{}, fmt.Errorf("pass@k beyond n: %w", err)
	}
	G := len(gm.tau)
	// t[j][l] = 1 − (1 − τ_l)^k_j: pass@k at each grid rate.
	t := make([][]float64, len(ks))
	for j, k := range ks {
		t[j] = make([]float64, G)
		for l, tau := range gm.tau {
			t[j][l] = -math.Expm1(float64(k) * math.Log1p(-tau))
		}
	}
	P := float64(len(counts))
	vars, bias := make([]float64, len(ks)), make([]float64, len(ks))
	// u[j] accumulates Σ_i π_i ∘ (t − E_i): Q'u[j] is the gradient δ of Σ_i E_i in α.
	u := make([][]float64, len(ks))
	for j := range u {
		u[j] = make([]float64, G)
	}
	for _, gr := range groups {
		x, m := gr.x, gr.m
		q := prior.posterior(x)
		pi := gm.posterior(x)
		for j, k := range ks {
			est := 0.0
			if k <= x.N {
				est, _ = PassAtK(x.N, x.C, k)
			} else {
				est, _ = q.passMeanVar(k)
				out.Extrapolated[j] += m
			}
			var e, e2 float64
			for l, w := range pi {
				e += w * t[j][l]
				e2 += w * t[j][l] * t[j][l]
			}
			for l, w := range pi {
				u[j][l] += m * w * (t[j][l] - e)
			}
			out.PassAtK[j] += m * est
			vars[j] += m * max(0, e2-e*e)
			bias[j] += m * (est - e)
		}
	}
	d := len(gm.alpha)
	delta := mat.NewVecDense(d, nil)
	for j := range ks {
		for h := range d {
			var s float64
			for l := range G {
				s += gm.q[l][h] * u[j][l]
			}
			delta.SetVec(h, s)
		}
		fitVar := mat.Inner(delta, gm.cov, delta) // δ'Σ_α δ
		out.PassAtK[j] /= P
		out.Extrapolated[j] /= P
		half := z95 * math.Sqrt(vars[j]+bias[j]*bias[j]+max(0, fitVar)) / P
		out.Lo[j] = max(0, out.PassAtK[j]-half)
		out.Hi[j] = min(1, out.PassAtK[j]+half)
	}
	return out, nil
}

// BeyondRows returns m with m[i][j] = PassAtKBeyond(counts[i], ks[j], prior): the per-problem
// matrix a bootstrap over problems resamples when some problems have n below the largest k.
func BeyondRows(counts []Count, ks []int, prior Prior) ([][]float64, error) {
	m := make([][]float64, len(counts))
	for i, x := range counts {
		m[i] = make([]float64, len(ks))
		q, made := posterior{}, false
		for j, k := range ks {
			if k < 1 {
				return nil, fmt.Errorf("pass@k beyond n: %w: k = %d", ErrInput, k)
			}
			if k <= x.N {
				v, err := PassAtK(x.N, x.C, k)
				if err != nil {
					return nil, fmt.Errorf("problem %d: %w", i, err)
				}
				m[i][j] = v
				continue
			}
			if !made {
				q, made = prior.posterior(x), true
			}
			m[i][j], _ = q.passMeanVar(k)
		}
	}
	return m, nil
}

// predictive returns P(c | n) under the prior for c = 0..n.
func (p Prior) predictive(n int) []float64 {
	out := make([]float64, n+1)
	wb := 1 - p.Zero - p.One
	lb0 := lbeta(p.Alpha, p.Beta)
	for c := 0; c <= n; c++ {
		lc, _ := math.Lgamma(float64(n + 1))
		l1, _ := math.Lgamma(float64(c + 1))
		l2, _ := math.Lgamma(float64(n - c + 1))
		out[c] = wb * math.Exp(lc-l1-l2+lbeta(p.Alpha+float64(c), p.Beta+float64(n-c))-lb0)
	}
	out[0] += p.Zero
	out[n] += p.One
	return out
}

// rateBin is the goodness-of-fit bin of an observed rate c/n: 0, five equal bins of (0, 1), 1.
func rateBin(c, n int) int {
	switch {
	case c == 0:
		return 0
	case c == n:
		return 6
	}
	return 1 + min(4, int(5*float64(c)/float64(n)))
}

func (p Prior) goodness(counts []Count) GoodnessOfFit {
	const bins = 7
	obs, exp := make([]float64, bins), make([]float64, bins)
	byN := map[int][]float64{}
	for _, x := range counts {
		obs[rateBin(x.C, x.N)]++
		pr, ok := byN[x.N]
		if !ok {
			pr = p.predictive(x.N)
			byN[x.N] = pr
		}
		for c, v := range pr {
			exp[rateBin(c, x.N)] += v
		}
	}
	// Merge bins expecting fewer than 5 problems into their right (the last into its left)
	// neighbour, so that the χ² approximation holds.
	var o, e []float64
	for i := range bins {
		if len(e) > 0 && e[len(e)-1] < 5 {
			o[len(o)-1] += obs[i]
			e[len(e)-1] += exp[i]
			continue
		}
		o, e = append(o, obs[i]), append(e, exp[i])
	}
	for len(e) > 1 && e[len(e)-1] < 5 {
		o[len(o)-2] += o[len(o)-1]
		e[len(e)-2] += e[len(e)-1]
		o, e = o[:len(o)-1], e[:len(e)-1]
	}
	df := len(e) - 1 - 4
	if df < 1 {
		return GoodnessOfFit{P: 1}
	}
	var chi2 float64
	for i := range e {
		d := o[i] - e[i]
		chi2 += d * d / e[i]
	}
	return GoodnessOfFit{Chi2: chi2, DF: df, P: distuv.ChiSquared{K: float64(df)}.Survival(chi2)}
}

// VarianceReduction returns the expected drop of one problem's posterior variance of pass@k,
// summed over ks, if add more samples were drawn (add >= 1), from its count x (N >= 0) under
// prior: Σ_k Var(f_k | x) − E_y[Var(f_k | x + y)], the expectation over the posterior
// predictive of y correct among the add new samples (computed exactly, O(add · len(ks))).
// Adaptive designs rank problems by it. Returns 0 for add < 1.
func VarianceReduction(x Count, add int, ks []int, prior Prior) float64 {
	if add < 1 {
		return 0
	}
	q := prior.posterior(x)
	var now float64
	for _, k := range ks {
		_, v := q.passMeanVar(k)
		now += v
	}
	// P(y | x) for y = 0..add: the point masses give all-wrong or all-right; the Beta part
	// is Beta-Binomial(add, a, b).
	var later float64
	lc, _ := math.Lgamma(float64(add + 1))
	lb0 := lbeta(q.a, q.b)
	for y := 0; y <= add; y++ {
		l1, _ := math.Lgamma(float64(y + 1))
		l2, _ := math.Lgamma(float64(add - y + 1))
		py := q.wb * math.Exp(lc-l1-l2+lbeta(q.a+float64(y), q.b+float64(add-y))-lb0)
		if y == 0 {
			py += q.w0
		}
		if y == add {
			py += q.w1
		}
		if py < 1e-15 {
			continue
		}
		q2 := prior.posterior(Count{N: x.N + add, C: x.C + y})
		for _, k := range ks {
			_, v := q2.passMeanVar(k)
			later += py * v
		}
	}
	return max(0, now-later)
}

// GainBeyond returns, for each k in ks (each > n >= 1), the mean over problems of what pass@k
// adds to pass@n: the unbiased pass@k − pass@n where a problem's own n reaches k, else the
// posterior mean of (1 − p)^n − (1 − p)^k under prior. Each term is >= 0, so pass@n plus the
// gain is a curve that never falls below the sampled pass@n (the posterior mean of pass@k alone
// can: a problem solved in 1 of 4 samples has unbiased pass@4 = 1 but a posterior pass@8 below
// it). Errors (wrapping ErrInput) for no counts, an invalid count, a count with N < n, or a
// k <= n.
func GainBeyond(counts []Count, n int, ks []int, prior Prior) ([]float64, error) {
	if len(counts) == 0 || n < 1 {
		return nil, fmt.Errorf("pass@k gain: %w: %d problems, n = %d", ErrInput, len(counts), n)
	}
	for _, k := range ks {
		if k <= n {
			return nil, fmt.Errorf("pass@k gain: %w: k = %d, need k > n = %d", ErrInput, k, n)
		}
	}
	out := make([]float64, len(ks))
	rows := map[Count][]float64{}
	for i, x := range counts {
		if err := x.validate(); err != nil || x.N < n {
			return nil, fmt.Errorf("pass@k gain: %w: problem %d has n = %d, c = %d (need n >= %d)", ErrInput, i, x.N, x.C, n)
		}
		r, ok := rows[x]
		if !ok {
			r = make([]float64, len(ks))
			base, _ := PassAtK(x.N, x.C, n)
			q := prior.posterior(x)
			gn := q.failMoment(n)
			for j, k := range ks {
				if k <= x.N {
					v, _ := PassAtK(x.N, x.C, k)
					r[j] = v - base
				} else {
					r[j] = max(0, gn-q.failMoment(k))
				}
			}
			rows[x] = r
		}
		for j := range ks {
			out[j] += r[j]
		}
	}
	for j := range out {
		out[j] /= float64(len(counts))
	}
	return out, nil
}

package passk

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// gModel is Efron's g-modelling prior of per-problem success rates (Efron 2016, "Empirical
// Bayes deconvolution estimates", Biometrika 103(1):1–20; Narasimhan & Efron 2020, deconvolveR,
// J. Stat. Softw. 94(11)): a discrete distribution g on a grid of rates τ (0, 1 and gInterior
// points evenly spaced in logit p), log g = Qα − φ(α), where Q holds indicator columns for
// p = 0 and p = 1 and a cubic B-spline basis in logit p. It is fitted by penalised maximum
// likelihood, l(α) − c0‖α_s‖ on the spline coefficients α_s (see gPenaltyOf), and carries the sandwich covariance of α̂ (Efron 2016; Efron &
// Hastie 2016, Computer Age Statistical Inference, ch. 21), so that a posterior mean's error from
// estimating the prior can be added to an interval by the delta method.
//
// Beyond uses it to judge its estimates: the zero-one-inflated Beta (Prior) has one shape
// parameter at each end, and on MATH500's base model (many rates in 1/128…3/128 and in
// 0.95…0.99, few at exactly 0 or 1) its posteriors near the ends are too sure of themselves.
type gModel struct {
	tau   []float64   // the grid: tau[0] = 0, tau[1] = 1, then the interior points in increasing order
	q     [][]float64 // len(tau) × d basis (centred and scaled columns)
	alpha []float64
	g     []float64 // prior mass on each grid point
	cov   *mat.SymDense
}

// Grid, basis and penalty. The interior grid spans logit p in [−gLogitMax, gLogitMax] (p from
// 4.5e-5 to 1 − 4.5e-5: pass@512 of the smallest rate is 2 %); gSplines cubic B-splines cover
// it (one dropped: with the two indicators they would sum to a constant, which φ absorbs).
// gPenalty is Efron's c0, a quarter of deconvolveR's default 1: c0 pulls the smooth part
// towards flat in logit p, which leaks prior mass just above p = 0, and with c0 = 1 a problem
// never solved in 128 samples got a pass@128 it does not have (MATH500's RL model in the
// adaptive simulation of internal/adaptive: the pass@128 interval's half-width 3.6 standard
// deviations of its error, not 1.96; every replay covered). There c0 from 0.1 to 0.5 all keep
// every k's coverage in 92.5–98.5 %; 0.25 is the middle.
const (
	gInterior  = 81
	gLogitMax  = 10.0
	gSplines   = 8
	gPenalty   = 0.25
	gAtomRidge = 1e-3
)

// bspline returns the cubic B-spline basis (Cox–de Boor) with nb functions on [lo, hi] at x,
// on evenly spaced knots with the end knots repeated.
func bspline(x, lo, hi float64, nb int) []float64 {
	const deg = 3
	inner := nb - deg // number of knot intervals
	h := (hi - lo) / float64(inner)
	knot := func(i int) float64 { // knots t_0 … t_{nb+deg}
		return lo + h*float64(min(max(i-deg, 0), inner))
	}
	nk := nb + deg + 1
	b := make([]float64, nk-1)
	for i := range b {
		t0, t1 := knot(i), knot(i+1)
		if (x >= t0 && x < t1) || (x == hi && t1 == hi && t0 < t1) {
			b[i] = 1
		}
	}
	for d := 1; d <= deg; d++ {
		for i := 0; i < nk-1-d; i++ {
			var v float64
			if den := knot(i+d) - knot(i); den > 0 {
				v += (x - knot(i)) / den * b[i]
			}
			if den := knot(i+d+1) - knot(i+1); den > 0 {
				v += (knot(i+d+1) - x) / den * b[i+1]
			}
			b[i] = v
		}
	}
	return b[:nb]
}

// newGGrid returns the grid and basis of a gModel.
func newGGrid() (tau []float64, q [][]float64) {
	tau = []float64{0, 1}
	for j := range gInterior {
		x := -gLogitMax + 2*gLogitMax*float64(j)/float64(gInterior-1)
		tau = append(tau, 1/(1+math.Exp(-x)))
	}
	d := 2 + gSplines - 1
	q = make([][]float64, len(tau))
	for j := range tau {
		q[j] = make([]float64, d)
		switch j {
		case 0:
			q[j][0] = 1
		case 1:
			q[j][1] = 1
		default:
			x := -gLogitMax + 2*gLogitMax*float64(j-2)/float64(gInterior-1)
			b := bspline(x, -gLogitMax, gLogitMax, gSplines)
			copy(q[j][2:], append(b[:gSplines/2], b[gSplines/2+1:]...))
		}
	}
	// Centre and scale each column to unit norm, as deconvolveR does, so that one c0 suits all.
	for h := range d {
		var mean, ss float64
		for j := range q {
			mean += q[j][h]
		}
		mean /= float64(len(q))
		for j := range q {
			q[j][h] -= mean
			ss += q[j][h] * q[j][h]
		}
		for j := range q {
			q[j][h] /= math.Sqrt(ss)
		}
	}
	return tau, q
}

// logLikRow returns log P(c | n, τ_j) for every grid point (−Inf where impossible).
func logLikRow(x Count, tau []float64) []float64 {
	row := make([]float64, len(tau))
	lc := lchoose(x.N, x.C)
	c, f := float64(x.C), float64(x.N-x.C)
	for j, t := range tau {
		switch {
		case t == 0:
			row[j] = ifElse(x.C == 0, 0, math.Inf(-1))
		case t == 1:
			row[j] = ifElse(x.C == x.N, 0, math.Inf(-1))
		default:
			row[j] = lc + c*math.Log(t) + f*math.Log1p(-t)
		}
	}
	return row
}

func ifElse(c bool, a, b float64) float64 {
	if c {
		return a
	}
	return b
}

// countGroup is one distinct count and how many problems have it.
type countGroup struct {
	x Count
	m float64
}

// groupCounts validates counts and groups them by distinct (n, c) in a fixed order.
func groupCounts(counts []Count) ([]countGroup, error) {
	mult := map[Count]int{}
	for i, x := range counts {
		if err := x.validate(); err != nil {
			return nil, fmt.Errorf("problem %d: %w", i, err)
		}
		mult[x]++
	}
	groups := make([]countGroup, 0, len(mult))
	for x, m := range mult {
		groups = append(groups, countGroup{x, float64(m)})
	}
	slices.SortFunc(groups, func(a, b countGroup) int {
		if a.x.N != b.x.N {
			return a.x.N - b.x.N
		}
		return a.x.C - b.x.C
	})
	return groups, nil
}

// fitGModel fits a gModel to grouped counts by Newton steps with the outer-product
// (BHHH: Berndt, Hall, Hall & Hausman 1974) approximation of the Hessian plus the penalty's exact Hessian, halving a step until
// the objective falls. Each count's likelihood row is scaled by its maximum (a constant per
// count, which changes neither α̂ nor its covariance) and kept only where it exceeds 1e-15
// (with n = 128 and c = 64 that is a fifth of the grid), so a step costs O(Σ support · d).
func fitGModel(groups []countGroup) (gModel, error) {
	tau, q := newGGrid()
	mg, d := len(tau), len(q[0])
	type row struct {
		idx []int
		lik []float64
	}
	rows := make([]row, len(groups))
	for i, gr := range groups {
		ll := logLikRow(gr.x, tau)
		top := slices.Max(ll)
		for j, v := range ll {
			if e := math.Exp(v - top); e > 1e-15 {
				rows[i].idx = append(rows[i].idx, j)
				rows[i].lik = append(rows[i].lik, e)
			}
		}
	}
	g, qbar, s := make([]float64, mg), make([]float64, d), make([]float64, d)
	// eval returns the log-likelihood at alpha; with grad != nil it adds the score
	// Σ_i m_i Q'W_i (W_ij = g_j (P_ij/f_i − 1): Efron 2016's score, here Q'π_i − Q'g with π_i
	// the posterior), and with info != nil the outer products Σ_i m_i (Q'W_i)(Q'W_i)'.
	eval := func(alpha, grad, info []float64) float64 {
		gWeightsInto(q, alpha, g)
		clear(qbar)
		for j := range mg {
			for h := range d {
				qbar[h] += q[j][h] * g[j]
			}
		}
		var ll float64
		for i, r := range rows {
			var f float64
			for t, j := range r.idx {
				f += g[j] * r.lik[t]
			}
			if !(f > 0) {
				return math.Inf(-1)
			}
			m := groups[i].m
			ll += m * math.Log(f)
			if grad == nil {
				continue
			}
			for h := range d {
				s[h] = -qbar[h]
			}
			for t, j := range r.idx {
				w := g[j] * r.lik[t] / f
				for h := range d {
					s[h] += q[j][h] * w
				}
			}
			for a := range d {
				grad[a] += m * s[a]
				if info != nil {
					for b := a; b < d; b++ {
						info[a*d+b] += m * s[a] * s[b]
					}
				}
			}
		}
		return ll
	}
	objective := func(alpha []float64) float64 {
		ll := eval(alpha, nil, nil)
		if math.IsInf(ll, -1) || math.IsNaN(ll) {
			return math.Inf(1)
		}
		return -ll + gPenaltyOf(alpha)
	}
	// curvature returns the score, the outer-product information and the penalised Hessian.
	curvature := func(alpha []float64) (grad []float64, info, hess *mat.SymDense) {
		grad, raw := make([]float64, d), make([]float64, d*d)
		eval(alpha, grad, raw)
		info = mat.NewSymDense(d, nil)
		for a := range d {
			for b := a; b < d; b++ {
				info.SetSym(a, b, raw[a*d+b])
			}
		}
		hess = gPenaltyHess(alpha)
		hess.AddSym(hess, info)
		return grad, info, hess
	}
	alpha := make([]float64, d)
	for h := 2; h < d; h++ {
		alpha[h] = 0.1 // not 0, where ‖α_s‖ bends sharply
	}
	f := objective(alpha)
	for range 200 {
		grad, _, hess := curvature(alpha)
		pg := gPenaltyGrad(alpha)
		neg := mat.NewVecDense(d, nil) // −∇objective
		for h := range d {
			neg.SetVec(h, grad[h]-pg[h])
		}
		var chol mat.Cholesky
		for ridge := 1e-9; !chol.Factorize(hess); ridge *= 10 {
			for h := range d {
				hess.SetSym(h, h, hess.At(h, h)+ridge)
			}
		}
		var step mat.VecDense
		if err := chol.SolveVecTo(&step, neg); err != nil {
			return gModel{}, fmt.Errorf("g-model fit: newton step: %w", err)
		}
		slope := mat.Dot(neg, &step) // the objective falls by about this much per unit step
		if slope < 1e-10 {
			break
		}
		next := make([]float64, d)
		t, fn := 1.0, math.Inf(1)
		for range 40 {
			for h := range d {
				next[h] = alpha[h] + t*step.AtVec(h)
			}
			if fn = objective(next); fn <= f-1e-4*t*slope {
				break
			}
			t /= 2
		}
		if !(fn < f) {
			break
		}
		done := f-fn < 1e-10*(1+math.Abs(f))
		alpha, f = next, fn
		if done {
			break
		}
	}
	if math.IsInf(f, 1) {
		return gModel{}, fmt.Errorf("g-model fit: the likelihood could not be maximised")
	}
	// Cov(α̂) = (I + S)^-1 I (I + S)^-1 with I the information summed from the
	// per-problem scores and S the penalty's Hessian: Efron 2016's covariance of the penalised MLE.
	_, info, h := curvature(alpha)
	var hinv mat.Dense
	if err := hinv.Inverse(h); err != nil {
		return gModel{}, fmt.Errorf("g-model fit: information matrix: %w", err)
	}
	var tmp, sand mat.Dense
	tmp.Mul(&hinv, info)
	sand.Mul(&tmp, &hinv)
	cov := mat.NewSymDense(d, nil)
	for a := range d {
		for b := a; b < d; b++ {
			cov.SetSym(a, b, (sand.At(a, b)+sand.At(b, a))/2)
		}
	}
	return gModel{tau: tau, q: q, alpha: alpha, g: gWeights(q, alpha), cov: cov}, nil
}

const gEps = 1e-10 // keeps ‖α_s‖ differentiable at 0

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// gPenaltyOf is the penalty: Efron's c0‖α_s‖ on the spline coefficients α_s (the smoothness
// assumption is about the smooth part), and a ridge gAtomRidge·α² on the two point masses'
// coefficients, which only keeps them finite when no count is all wrong or all right (their
// masses are otherwise fixed by the many problems at c = 0 and c = n).
func gPenaltyOf(a []float64) float64 {
	return gPenalty*math.Sqrt(dot(a[2:], a[2:])+gEps) + gAtomRidge*(a[0]*a[0]+a[1]*a[1])
}

func gPenaltyGrad(a []float64) []float64 {
	g := make([]float64, len(a))
	nrm := math.Sqrt(dot(a[2:], a[2:]) + gEps)
	for h := range a {
		if h < 2 {
			g[h] = 2 * gAtomRidge * a[h]
		} else {
			g[h] = gPenalty * a[h] / nrm
		}
	}
	return g
}

func gPenaltyHess(a []float64) *mat.SymDense {
	d := len(a)
	out := mat.NewSymDense(d, nil)
	out.SetSym(0, 0, 2*gAtomRidge)
	out.SetSym(1, 1, 2*gAtomRidge)
	nrm := math.Sqrt(dot(a[2:], a[2:]) + gEps)
	for x := 2; x < d; x++ {
		for y := x; y < d; y++ {
			v := -gPenalty * a[x] * a[y] / (nrm * nrm * nrm)
			if x == y {
				v += gPenalty / nrm
			}
			out.SetSym(x, y, v)
		}
	}
	return out
}

// gWeights returns g = exp(Qα) / Σ exp(Qα).
func gWeights(q [][]float64, alpha []float64) []float64 {
	g := make([]float64, len(q))
	gWeightsInto(q, alpha, g)
	return g
}

func gWeightsInto(q [][]float64, alpha, g []float64) {
	top := math.Inf(-1)
	for j := range q {
		g[j] = dot(q[j], alpha)
		top = max(top, g[j])
	}
	var s float64
	for j := range g {
		g[j] = math.Exp(g[j] - top)
		s += g[j]
	}
	for j := range g {
		g[j] /= s
	}
}

// posterior returns the posterior weights over the grid for one count.
func (m gModel) posterior(x Count) []float64 {
	row := logLikRow(x, m.tau)
	top := math.Inf(-1)
	for j := range row {
		if m.g[j] > 0 {
			row[j] += math.Log(m.g[j])
		} else {
			row[j] = math.Inf(-1)
		}
		top = max(top, row[j])
	}
	var s float64
	for j := range row {
		row[j] = math.Exp(row[j] - top)
		s += row[j]
	}
	for j := range row {
		row[j] /= s
	}
	return row
}

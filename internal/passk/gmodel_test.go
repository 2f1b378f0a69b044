package passk

import (
	"math"
	"testing"
)

// The cubic B-spline basis sums to 1 everywhere on its range (partition of unity) and each
// function is non-negative.
func TestBSplinePartitionOfUnity(t *testing.T) {
	for _, x := range []float64{-10, -9.9, -3, 0, 2.5, 9.99, 10} {
		var s float64
		for i, v := range bspline(x, -10, 10, gSplines) {
			if v < 0 {
				t.Errorf("x = %v: basis %d = %v < 0", x, i, v)
			}
			s += v
		}
		if math.Abs(s-1) > 1e-12 {
			t.Errorf("x = %v: basis sums to %v, want 1", x, s)
		}
	}
}

// predictiveCounts lays out problems at n by the prior's predictive distribution of c.
func predictiveCounts(p Prior, n, problems int) []Count {
	var counts []Count
	for c, pr := range p.predictive(n) {
		for range int(math.Round(float64(problems) * pr)) {
			counts = append(counts, Count{N: n, C: c})
		}
	}
	return counts
}

// The g-model fitted to counts laid out by a known prior's predictive distribution gives back
// that prior's pass@k curve, also 4n past the sampled n (within half a point).
func TestGModelRecoversCurve(t *testing.T) {
	truth := Prior{Zero: 0.1, One: 0.2, Alpha: 0.7, Beta: 1.5}
	groups, err := groupCounts(predictiveCounts(truth, 64, 4000))
	if err != nil {
		t.Fatal(err)
	}
	gm, err := fitGModel(groups)
	if err != nil {
		t.Fatal(err)
	}
	q := truth.posterior(Count{})
	for _, k := range []int{1, 4, 16, 64, 256} {
		want, _ := q.passMeanVar(k)
		var got float64
		for l, w := range gm.g {
			got += w * -math.Expm1(float64(k)*math.Log1p(-gm.tau[l]))
		}
		if math.Abs(got-want) > 0.005 {
			t.Errorf("pass@%d of the fitted g-model %.4f, of the prior that made the counts %.4f", k, got, want)
		}
	}
}

// The gradient Beyond uses for the delta method, ∂E[t | x]/∂α = Q'(π ∘ (t − E)), matches a
// central finite difference of the posterior mean.
func TestGModelPosteriorGradient(t *testing.T) {
	groups, _ := groupCounts([]Count{{16, 0}, {16, 3}, {32, 30}, {8, 8}, {64, 1}, {64, 0}})
	gm, err := fitGModel(groups)
	if err != nil {
		t.Fatal(err)
	}
	x, k := Count{N: 16, C: 0}, 64
	tk := make([]float64, len(gm.tau))
	for l, tau := range gm.tau {
		tk[l] = -math.Expm1(float64(k) * math.Log1p(-tau))
	}
	mean := func(m gModel) float64 {
		var e float64
		for l, w := range m.posterior(x) {
			e += w * tk[l]
		}
		return e
	}
	pi, e := gm.posterior(x), mean(gm)
	for h := range gm.alpha {
		var analytic float64
		for l, w := range pi {
			analytic += gm.q[l][h] * w * (tk[l] - e)
		}
		const step = 1e-6
		shifted := func(s float64) float64 {
			a := append([]float64(nil), gm.alpha...)
			a[h] += s
			m := gm
			m.alpha, m.g = a, gWeights(gm.q, a)
			return mean(m)
		}
		numeric := (shifted(step) - shifted(-step)) / (2 * step)
		if math.Abs(analytic-numeric) > 1e-6 {
			t.Errorf("∂E/∂α_%d: analytic %v, finite difference %v", h, analytic, numeric)
		}
	}
}

// The fit stops at a stationary point of the penalised log-likelihood: the score equals the
// penalty's gradient in every coordinate.
func TestGModelFitIsStationary(t *testing.T) {
	counts := predictiveCounts(Prior{Zero: 0.07, One: 0.5, Alpha: 0.3, Beta: 0.4}, 32, 500)
	counts = append(counts, predictiveCounts(Prior{Alpha: 2, Beta: 3}, 128, 300)...)
	groups, _ := groupCounts(counts)
	gm, err := fitGModel(groups)
	if err != nil {
		t.Fatal(err)
	}
	// The score by central differences of the log-likelihood, computed from scratch.
	ll := func(alpha []float64) float64 {
		g := gWeights(gm.q, alpha)
		var s float64
		for _, gr := range groups {
			var f float64
			for j, v := range logLikRow(gr.x, gm.tau) {
				f += g[j] * math.Exp(v)
			}
			s += gr.m * math.Log(f)
		}
		return s
	}
	pg := gPenaltyGrad(gm.alpha)
	for h := range gm.alpha {
		const step = 1e-5
		up := append([]float64(nil), gm.alpha...)
		down := append([]float64(nil), gm.alpha...)
		up[h] += step
		down[h] -= step
		score := (ll(up) - ll(down)) / (2 * step)
		if math.Abs(score-pg[h]) > 1e-3 {
			t.Errorf("α_%d: score %.6f, penalty gradient %.6f: not a stationary point", h, score, pg[h])
		}
	}
	var mass float64
	for _, w := range gm.g {
		mass += w
	}
	if math.Abs(mass-1) > 1e-12 {
		t.Errorf("prior mass %v, want 1", mass)
	}
}

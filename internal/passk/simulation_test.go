package passk

import (
	"math"
	"math/rand/v2"
	"testing"
)

// rateAtom is one point of the simulated problem population: with probability w a problem has
// true per-sample success rates (base, rl). RL sharpens mid-rate problems and loses some rare
// ones, the pattern Yue et al. describe.
type rateAtom struct{ w, base, rl float64 }

var simPopulation = []rateAtom{
	{0.06, 0, 0},
	{0.04, 0.005, 0},
	{0.05, 0.02, 0},
	{0.05, 0.02, 0.1},
	{0.10, 0.1, 0.3},
	{0.15, 0.3, 0.7},
	{0.20, 0.6, 0.9},
	{0.20, 0.9, 1},
	{0.15, 1, 1},
}

// truePassAtK is the estimand: the expected pass@k of a problem drawn from the population,
// E[1 - (1-r)^k], exact for the discrete population. Problem resampling targets this
// population mean (the problem set is itself a sample), not the mean over one fixed set.
func truePassAtK(k int, rate func(rateAtom) float64) float64 {
	var v float64
	for _, a := range simPopulation {
		v += a.w * (1 - math.Pow(1-rate(a), float64(k)))
	}
	return v
}

// TestBootstrapCoverageSimulation is issue 6's check: synthetic comparisons (200 problems drawn
// from simPopulation, n = 16 samples per problem and model) get paired 95% bootstrap intervals
// (1,000 draws each) that must cover the true pass@1 and pass@16 of each model, and their
// difference at k = 4, in 93–97% of comparisons. Seeded, so deterministic.
//
// The issue asks for 500 comparisons; with 500 the coverage estimate itself has a standard
// error of about 1 point, so a well-calibrated interval falls outside 93–97% for some target by
// chance alone (one seed gave 92.8% on one of five targets while 4,000 comparisons gave
// 94.3–95.1% on all). The test therefore runs 4 × 500 and asserts on the pooled rate, logging
// the first 500 on their own.
func TestBootstrapCoverageSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation skipped in -short mode")
	}
	const comparisons, first, nprob, n, draws = 2000, 500, 200, 16, 1000
	ks := []int{1, 4, n}
	baseRate := func(a rateAtom) float64 { return a.base }
	rlRate := func(a rateAtom) float64 { return a.rl }
	type target struct {
		name  string
		truth float64
		got   func(BootstrapResult) Estimate
		fixed func(rates []rateAtom) float64 // the same quantity over the drawn problem set
	}
	fixedMean := func(k int, rate func(rateAtom) float64) func([]rateAtom) float64 {
		return func(rs []rateAtom) float64 {
			var v float64
			for _, a := range rs {
				v += 1 - math.Pow(1-rate(a), float64(k))
			}
			return v / float64(len(rs))
		}
	}
	targets := []target{
		{"base pass@1", truePassAtK(1, baseRate), func(r BootstrapResult) Estimate { return r.Models[0].Pass1 }, fixedMean(1, baseRate)},
		{"base pass@16", truePassAtK(n, baseRate), func(r BootstrapResult) Estimate { return r.Models[0].PassN }, fixedMean(n, baseRate)},
		{"RL pass@1", truePassAtK(1, rlRate), func(r BootstrapResult) Estimate { return r.Models[1].Pass1 }, fixedMean(1, rlRate)},
		{"RL pass@16", truePassAtK(n, rlRate), func(r BootstrapResult) Estimate { return r.Models[1].PassN }, fixedMean(n, rlRate)},
		{"RL-base pass@4", truePassAtK(4, rlRate) - truePassAtK(4, baseRate), func(r BootstrapResult) Estimate { return r.Pairs[0].Diff[1] },
			func(rs []rateAtom) float64 { return fixedMean(4, rlRate)(rs) - fixedMean(4, baseRate)(rs) }},
	}
	covered := make([]int, len(targets))
	coveredFirst := make([]int, len(targets))
	coveredFixed := make([]int, len(targets))

	r := rand.New(rand.NewPCG(2026, 6))
	binomial := func(p float64) int {
		c := 0
		for range n {
			if r.Float64() < p {
				c++
			}
		}
		return c
	}
	for rep := range comparisons {
		base, rl := make([]Count, nprob), make([]Count, nprob)
		rates := make([]rateAtom, nprob)
		for i := range nprob {
			u, a := r.Float64(), simPopulation[len(simPopulation)-1]
			for _, cand := range simPopulation {
				if u < cand.w {
					a = cand
					break
				}
				u -= cand.w
			}
			rates[i] = a
			base[i], rl[i] = Count{n, binomial(a.base)}, Count{n, binomial(a.rl)}
		}
		res, err := Bootstrap([][]Count{base, rl}, BootstrapOptions{Draws: draws, Seed: uint64(rep), Ks: ks})
		if err != nil {
			t.Fatal(err)
		}
		for j, tg := range targets {
			e := tg.got(res)
			if e.Lo <= tg.truth && tg.truth <= e.Hi {
				covered[j]++
				if rep < first {
					coveredFirst[j]++
				}
			}
			if f := tg.fixed(rates); e.Lo <= f && f <= e.Hi {
				coveredFixed[j]++
			}
		}
	}
	for j, tg := range targets {
		cov := float64(covered[j]) / comparisons
		t.Logf("%-15s truth %.4f: covered in %.1f%% of %d (first %d: %.1f%%; fixed-set mean instead: %.1f%%)",
			tg.name, tg.truth, 100*cov, comparisons, first, 100*float64(coveredFirst[j])/first,
			100*float64(coveredFixed[j])/comparisons)
		if cov < 0.93 || cov > 0.97 {
			t.Errorf("%s: 95%% intervals covered the true value in %.1f%% of %d comparisons, want 93–97%%",
				tg.name, 100*cov, comparisons)
		}
	}
}

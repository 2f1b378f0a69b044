package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// Extrapolation checked against real samples: the MATH500 counts thinned to n = 32 per problem
// (drawn without replacement from each problem's 128 samples, seeded) and continued to 64 and
// 128 land within 1.5 points of the full data's unbiased pass@64 and pass@128, inside their
// 95% intervals, and the continued curves cross where the full data's do.
func TestPastNPredictsMATH500(t *testing.T) {
	c, ps, full := examplePair(t, readCountsCSV(t), "qwen2.5-7b-base.csv", "qwen2.5-7b-simplerl-zoo.csv", "rl")
	ref, err := Compute(c, ps, full)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(32, 1))
	thin := map[int64][]store.Count{}
	for run, cs := range full {
		for _, x := range cs {
			// Hypergeometric: 32 of the 128 samples, x.C of which are correct.
			left, good, got := x.N, x.C, 0
			for range 32 {
				if rng.IntN(left) < good {
					got++
					good--
				}
				left--
			}
			thin[run] = append(thin[run], store.Count{RunID: run, ProblemID: x.ProblemID, N: 32, C: got})
		}
	}
	rep, err := Compute(c, ps, thin)
	if err != nil {
		t.Fatal(err)
	}
	for m, mr := range rep.Models {
		if mr.PastN == nil || len(mr.PastN.Points) != 2 || mr.PastN.Points[0].K != 64 || mr.PastN.Points[1].K != 128 {
			t.Fatalf("model %d: past n %+v", m, mr.PastN)
		}
		for _, p := range mr.PastN.Points {
			want := ref.Models[m].PassAtK[p.K-1].Value
			t.Logf("%s pass@%d from n = 32: %.2f%% [%.2f, %.2f], full data %.2f%%, gain %+.2f pts",
				mr.Name, p.K, 100*p.Value, 100*p.Lo, 100*p.Hi, 100*want, 100*p.Gain)
			if math.Abs(p.Value-want) > 0.015 || want < p.Lo || want > p.Hi {
				t.Errorf("%s pass@%d extrapolated %.4f [%.4f, %.4f]; full data %.4f", mr.Name, p.K, p.Value, p.Lo, p.Hi, want)
			}
			if p.Gain <= 0 {
				t.Errorf("%s pass@%d gains %v over pass@32", mr.Name, p.K, p.Gain)
			}
		}
	}
	pn := rep.Pairs[0].PastN
	if pn == nil || pn.KMax != 128 || !pn.Cross.Found || math.Abs(pn.Cross.K-ref.Pairs[0].Crossover.K) > 4 {
		t.Errorf("continued crossover %+v; full data k* %.2f", pn, ref.Pairs[0].Crossover.K)
	} else {
		t.Logf("continued k* %.2f (full data %.2f)", pn.Cross.K, ref.Pairs[0].Crossover.K)
	}
	// The full data's own continuation goes to 512; an adaptive design's report has none.
	if ref.Models[0].PastN == nil || ref.Models[0].PastN.Points[1].K != 512 || ref.Pairs[0].PastN.KMax != 512 {
		t.Errorf("full data past n %+v", ref.Models[0].PastN)
	}
}

// Past n the curve never falls below the sampled pass@n (every problem solved at n = 4 here:
// the posterior mean alone gave pass@8 = 99.6% under pass@4 = 100%), and a model whose every
// sample failed is flagged, not reported with a zero-width certainty.
func TestPastNNeverFallsAndDegenerateFlagged(t *testing.T) {
	c := store.Comparison{ID: 1, Runs: []store.Run{{ID: 1, ModelName: "base", Role: "base"}, {ID: 2, ModelName: "rl", Role: "rl"}}}
	var ps []store.Problem
	counts := map[int64][]store.Count{}
	for i, cs := range [][2]int{{1, 0}, {2, 0}, {4, 0}} {
		pid := int64(10 + i)
		ps = append(ps, store.Problem{ID: pid, Key: fmt.Sprint("p", i), Idx: i, Reference: "1"})
		counts[1] = append(counts[1], store.Count{RunID: 1, ProblemID: pid, N: 4, C: cs[0]})
		counts[2] = append(counts[2], store.Count{RunID: 2, ProblemID: pid, N: 4, C: cs[1]})
	}
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	b := rep.Models[0]
	for _, p := range b.PastN.Points {
		if p.Value < b.PassAtK[3].Value || p.Gain < 0 || p.Value > 1 {
			t.Errorf("base pass@%d = %v (gain %v) under pass@4 = %v", p.K, p.Value, p.Gain, b.PassAtK[3].Value)
		}
	}
	if !rep.Models[1].PastN.Prior.Degenerate || !rep.Models[1].PastN.Prior.Poor {
		t.Errorf("a model with every sample wrong: prior %+v; want degenerate and poor", rep.Models[1].PastN.Prior)
	}
}

package analysis

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/reach-lab/reach/internal/adaptive"
	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
)

// An adaptive design on the MATH500 pair (true rates c/128, half the uniform budget, seed 7):
// the report's curves go to the target n, are marked extrapolated past the pilot's n, stay
// within 1.5 points of the full data's at every k, and put k* in the full data's 95% interval.
func TestAdaptiveReportMATH500(t *testing.T) {
	c, ps, full := examplePair(t, readCountsCSV(t), "qwen2.5-7b-base.csv", "qwen2.5-7b-simplerl-zoo.csv", "rl")
	truth := make([][]float64, 2)
	for m, run := range []int64{1, 2} {
		for _, x := range full[run] {
			truth[m] = append(truth[m], float64(x.C)/float64(x.N))
		}
	}
	opt := adaptive.Options{Target: 128, Budget: 64000}
	counts := [][]passk.Count{make([]passk.Count, 500), make([]passk.Count, 500)}
	rng := rand.New(rand.NewPCG(7, 7))
	for {
		more, err := adaptive.Next(counts, opt)
		if err != nil {
			t.Fatal(err)
		}
		any := false
		for m := range more {
			for i, d := range more[m] {
				for range d {
					counts[m][i].N++
					if rng.Float64() < truth[m][i] {
						counts[m][i].C++
					}
				}
				any = any || d > 0
			}
		}
		if !any {
			break
		}
	}
	sampled := map[int64][]store.Count{}
	for m, run := range []int64{1, 2} {
		for i, x := range full[run] {
			sampled[run] = append(sampled[run], store.Count{RunID: run, ProblemID: x.ProblemID, N: counts[m][i].N, C: counts[m][i].C})
		}
	}
	c.Sampling = json.RawMessage(`{"n": 128, "adaptive": true, "budget": 64000}`)
	rep, err := Compute(c, ps, sampled)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Compute(store.Comparison{ID: 1, Runs: c.Runs}, ps, full)
	if err != nil {
		t.Fatal(err)
	}
	if rep.KMax != 128 || rep.KSampled < adaptive.DefaultPilot || rep.KSampled >= 128 {
		t.Fatalf("k max %d, k sampled %d; want 128 and from the pilot's %d below 128", rep.KMax, rep.KSampled, adaptive.DefaultPilot)
	}
	if rep.Design == nil || rep.Design.Drawn > 64000 || rep.Design.Uniform != 128000 {
		t.Fatalf("design %+v", rep.Design)
	}
	worst := 0.0
	for m := range rep.Models {
		b := rep.Models[m].Beyond
		if b == nil || b.FromK <= rep.KSampled || b.Prior.Poor {
			t.Fatalf("model %d: beyond from k = %v (k sampled %d)", m, b, rep.KSampled)
		}
		for k, p := range rep.Models[m].PassAtK {
			if p.Extrapolated != (k+1 >= b.FromK) {
				t.Errorf("model %d pass@%d marked extrapolated %v", m, k+1, p.Extrapolated)
			}
			worst = max(worst, math.Abs(p.Value-ref.Models[m].PassAtK[k].Value))
		}
	}
	t.Logf("drawn %d of %d; worst |Δpass@k| %.3f points; k* %.2f (full data %.2f); widest posterior intervals %.2f, %.2f points",
		rep.Design.Drawn, rep.Design.Uniform, 100*worst, rep.Pairs[0].Crossover.K, ref.Pairs[0].Crossover.K, rep.Design.Widest[0], rep.Design.Widest[1])
	if worst > 0.015 {
		t.Errorf("worst pass@k departs %.3f points from the full data's", 100*worst)
	}
	if k := rep.Pairs[0].Crossover.K; !rep.Pairs[0].Crossover.Found || k < 8.2 || k > 30.5 {
		t.Errorf("k* = %v, want in the full data's interval [8.2, 30.5]", k)
	}
	// Figures on counts alone stop at the sampled k.
	if g := rep.Models[0].GPass; len(g) == 0 || g[len(g)-1].K != rep.KSampled {
		t.Errorf("G-Pass@k ks end at %v, want %d", g, rep.KSampled)
	}
	// The statistics job's bootstrap runs to k max with the priors.
	s, err := ComputeStats(rep, nil, StatsOptions{Draws: 100})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(s)
	rep.AttachStats(store.Stats{Hash: rep.Hash(), Status: StatsReady, Data: data})
	if rep.Stats.Status != StatsReady || rep.Models[0].PassKMaxCI == nil || rep.Pairs[0].CrossoverCI == nil {
		t.Fatalf("stats not attached: %+v", rep.Stats)
	}
	// A report without a design is unchanged: curves to the smallest n.
	if ref.KMax != 128 || ref.KSampled != 128 || ref.Models[0].Beyond != nil || ref.Design != nil {
		t.Errorf("full-data report: k max %d, k sampled %d, beyond %v, design %v", ref.KMax, ref.KSampled, ref.Models[0].Beyond, ref.Design)
	}
}

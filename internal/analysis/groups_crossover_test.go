package analysis

import (
	"fmt"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// A subject that holds every problem has the headline's crossover: the
// breakdowns' curves are kept at powers of two, but their crossover is
// found on every k (a new user saw "meet at k = 8" under a headline of 7).
//
// Ten problems, n = 16: the base model solves each 2 times in 16
// (pass@k = 1 − C(14,k)/C(16,k): 0.542 at k = 5, 0.625 at k = 6); the RL
// model 6 problems always and 4 never (0.6 at every k). The base model is
// ahead from k = 6.
func TestBreakdownCrossoverOnEveryK(t *testing.T) {
	c := store.Comparison{ID: 1, Name: "pair", Status: store.StatusReady, Runs: []store.Run{
		{ID: 1, ModelName: "base", Role: "base"}, {ID: 2, ModelName: "rl", Role: "rl"}}}
	var ps []store.Problem
	counts := map[int64][]store.Count{}
	for i := range 10 {
		ps = append(ps, store.Problem{ID: int64(10 + i), Idx: i, Key: fmt.Sprintf("p%d", i), Reference: "1", Subject: "Algebra"})
		counts[1] = append(counts[1], store.Count{RunID: 1, ProblemID: int64(10 + i), N: 16, C: 2})
		c := 0
		if i < 6 {
			c = 16
		}
		counts[2] = append(counts[2], store.Count{RunID: 2, ProblemID: int64(10 + i), N: 16, C: c})
	}
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	head := rep.Pairs[0].Crossover
	if !head.Found || head.AtSampledK != 6 {
		t.Fatalf("headline crossover %+v; want found at k = 6", head)
	}
	for _, b := range rep.Breakdowns {
		if b.Crossover.AtSampledK != head.AtSampledK || b.Crossover.K != head.K {
			t.Errorf("%s %s: crossover k* %.3f at k = %d; headline %.3f at k = %d", b.By, b.Group,
				b.Crossover.K, b.Crossover.AtSampledK, head.K, head.AtSampledK)
		}
	}
	if len(rep.Breakdowns) == 0 {
		t.Fatal("no breakdown by subject")
	}
}

package tempsweep

import (
	"math"
	"slices"
	"testing"

	"github.com/reach-lab/reach/internal/passk"
)

func counts(n int, cs ...int) []passk.Count {
	out := make([]passk.Count, len(cs))
	for i, c := range cs {
		out[i] = passk.Count{N: n, C: c}
	}
	return out
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestStemAndGroups(t *testing.T) {
	for in, want := range map[string]string{"rl@T=1.0": "rl", "rl@T=x": "rl@T=x", "rl": "rl", "@T=1": "@T=1"} {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
	if x, ok := NameTemperature("rl@T=1.25"); !ok || x != 1.25 {
		t.Errorf("NameTemperature(rl@T=1.25) = %v, %v", x, ok)
	}
	for _, bad := range []string{"rl", "rl@T=", "rl@T=-1", "@T=1", "rl@T=1x"} {
		if _, ok := NameTemperature(bad); ok {
			t.Errorf("NameTemperature(%q): a temperature", bad)
		}
	}
	runs := []Run{
		{Name: "base", Role: "base", Identity: "b", Temperature: 0.6, HasTemp: true},
		{Name: "rl@T=1.2", Role: "rl", Identity: "r", Temperature: 1.2, HasTemp: true},
		{Name: "rl@T=0.6", Role: "rl", Identity: "r", Temperature: 0.6, HasTemp: true},
		{Name: "rl again", Role: "rl", Identity: "r", Temperature: 0.6, HasTemp: true},     // same T: dropped
		{Name: "rl?", Role: "rl", Identity: "r"},                                           // no temperature
		{Name: "ckpt", Role: "checkpoint", Identity: "r", Temperature: 1.0, HasTemp: true}, // other role
	}
	got := Groups(runs)
	if len(got) != 1 || !slices.Equal(got[0], []int{2, 1}) {
		t.Fatalf("Groups = %v, want [[2 1]]", got)
	}
	if sw, err := Compute(runs[:2], []string{}, Options{}); sw != nil || err != nil {
		t.Errorf("no sweep: got %v, %v", sw, err)
	}
}

// Two temperatures of one model on three problems, n = 4, worked out by hand.
func TestUnionByHand(t *testing.T) {
	runs := []Run{
		{Name: "base", Role: "base", Identity: "b", Temperature: 0.6, HasTemp: true, Counts: counts(4, 4, 0, 0)},
		{Name: "rl@T=0.6", Role: "rl", Identity: "r", Temperature: 0.6, HasTemp: true, Counts: counts(4, 2, 0, 0)},
		{Name: "rl@T=1", Role: "rl", Identity: "r", Temperature: 1, HasTemp: true, Counts: counts(4, 0, 1, 0)},
	}
	sw, err := Compute(runs, []string{"p1", "p2", "p3"}, Options{Draws: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sw.Ks, []int{1, 2, 4}) || len(sw.Models) != 1 {
		t.Fatalf("ks %v, %d models", sw.Ks, len(sw.Models))
	}
	m := sw.Models[0]
	if m.Model != "rl" || len(m.Temperatures) != 2 {
		t.Fatalf("model %+v", m)
	}
	lo, hi := m.Temperatures[0], m.Temperatures[1]
	// T = 0.6: pass@1 = (2/4)/3, pass@2 = (1 − C(2,2)/C(4,2))/3 = (5/6)/3, pass@4 = 1/3.
	near(t, "pass@1 at 0.6", lo.PassAtK[0].Value, 1.0/6)
	near(t, "pass@2 at 0.6", lo.PassAtK[1].Value, 5.0/18)
	near(t, "pass@4 at 0.6", lo.PassAtK[2].Value, 1.0/3)
	// T = 1: pass@1 = (1/4)/3, pass@2 = (1 − C(3,2)/C(4,2))/3 = (1/2)/3.
	near(t, "pass@1 at 1", hi.PassAtK[0].Value, 1.0/12)
	near(t, "pass@2 at 1", hi.PassAtK[1].Value, 1.0/6)
	if lo.Solved != 1 || hi.Solved != 1 || !slices.Equal(lo.OnlyHere, []string{"p1"}) || !slices.Equal(hi.OnlyHere, []string{"p2"}) {
		t.Errorf("solved sets: %+v, %+v", lo, hi)
	}
	u := m.Union
	// Union: p1 and p2 solved at some temperature of three; the best single one solves 1.
	if u.Solved != 2 || u.BestSolved != 1 || u.BestTemperature != 0.6 {
		t.Errorf("union %+v", u)
	}
	near(t, "coverage", u.Coverage, 2.0/3)
	near(t, "gain", u.Gain, 1.0/3)
	// Union@1 = mean of 1 − (1 − 1/2)(1 − 0), 1 − (1 − 0)(1 − 1/4), 0 = (1/2 + 1/4)/3.
	near(t, "union@1", u.AtK[0].Union, 0.25)
	// Union@2 = (5/6 + 1/2)/3 = 4/9; union@4 = coverage.
	near(t, "union@2", u.AtK[1].Union, 4.0/9)
	near(t, "union@4", u.AtK[2].Union, 2.0/3)
	near(t, "best single @2", u.AtK[1].Best, 5.0/18)
	// At k = 1 the union spends 2 samples; the best single temperature's pass@2 is 5/18.
	if p := u.AtK[0]; p.Matched == nil || p.MatchedK != 2 || math.Abs(*p.Matched-5.0/18) > 1e-12 {
		t.Errorf("matched at k=1: %+v", p)
	}
	if u.AtK[2].Matched != nil {
		t.Errorf("matched at k=4 needs 8 samples of 4: %+v", u.AtK[2])
	}
	// Crossovers: rl@T=0.6 against base (same temperature), rl@T=1 against runs[0] (no base at 1).
	if len(sw.Crossovers) != 2 || sw.Crossovers[0].Other != "rl@T=0.6" || sw.Crossovers[1].Base != "base" || sw.Crossovers[1].Temperature != 1 {
		t.Fatalf("crossovers %+v", sw.Crossovers)
	}
}

// k* by hand: base (1 of 4 on two problems) is behind the RL model (4 of 4 and 0 of 4) at k = 1,
// level at k = 2 and ahead after: k* = 2.
func TestCrossoverByHand(t *testing.T) {
	runs := []Run{
		{Name: "base", Role: "base", Identity: "b", Temperature: 1, HasTemp: true, Counts: counts(4, 1, 1)},
		{Name: "rl@T=0.6", Role: "rl", Identity: "r", Temperature: 0.6, HasTemp: true, Counts: counts(4, 0, 0)},
		{Name: "rl@T=1", Role: "rl", Identity: "r", Temperature: 1, HasTemp: true, Counts: counts(4, 4, 0)},
	}
	sw, err := Compute(runs, []string{"a", "b"}, Options{Draws: 300, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	c := sw.Crossovers
	if len(c) != 2 {
		t.Fatalf("crossovers %+v", c)
	}
	// rl@T=0.6 solves nothing: base is never behind, k* = the first k.
	if !c[0].Found || c[0].K != 1 || c[0].BaseTemperature != 1 || c[0].OtherTemperature != 0.6 {
		t.Errorf("at 0.6: %+v", c[0])
	}
	if !c[1].Found || c[1].K != 2 || c[1].Temperature != 1 || c[1].KMax != 4 {
		t.Errorf("at 1: %+v", c[1])
	}
	if c[1].FoundShare <= 0 || c[1].FoundShare > 1 || !c[1].Lo.Found || c[1].Lo.K > 2 {
		t.Errorf("interval at 1: %+v", c[1])
	}
}

// Only the base model swept: each base temperature against the RL model, x = base's temperature.
func TestBaseSweep(t *testing.T) {
	runs := []Run{
		{Name: "base@T=0.6", Role: "base", Identity: "b", Temperature: 0.6, HasTemp: true, Counts: counts(4, 1, 1)},
		{Name: "base@T=1.0", Role: "base", Identity: "b", Temperature: 1, HasTemp: true, Counts: counts(4, 2, 1)},
		{Name: "rl", Role: "rl", Identity: "r", Temperature: 0.6, HasTemp: true, Counts: counts(4, 4, 0)},
	}
	sw, err := Compute(runs, []string{"a", "b"}, Options{Draws: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Models) != 1 || sw.Models[0].Model != "base" || len(sw.Crossovers) != 2 ||
		sw.Crossovers[0].Base != "base@T=0.6" || sw.Crossovers[1].Temperature != 1 || sw.Crossovers[1].Other != "rl" || !sw.Crossovers[1].BaseSwept {
		t.Fatalf("%+v", sw)
	}
}

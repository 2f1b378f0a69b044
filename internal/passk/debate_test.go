package passk

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestAnswerEntropy(t *testing.T) {
	for _, tc := range []struct {
		counts []int
		want   float64
	}{
		{[]int{8}, 0},
		{[]int{4, 4}, 1},
		{[]int{1, 1, 1, 1}, 2},
		{[]int{2, 1, 1}, 1.5},               // −(½ log2 ½ + 2 · ¼ log2 ¼) = ½ + 1
		{[]int{3, 1, 0}, 0.811278124459132}, // −(¾ log2 ¾ + ¼ log2 ¼)
		{[]int{0, 5}, 0},
	} {
		got, err := AnswerEntropy(tc.counts)
		if err != nil || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("AnswerEntropy(%v) = %v, %v; want %v", tc.counts, got, err, tc.want)
		}
	}
	for _, bad := range [][]int{nil, {0, 0}, {2, -1}} {
		if _, err := AnswerEntropy(bad); !errors.Is(err, ErrInput) {
			t.Errorf("AnswerEntropy(%v): err = %v, want ErrInput", bad, err)
		}
	}
}

func TestSupport(t *testing.T) {
	base := []Count{{128, 1}, {128, 64}, {128, 0}, {128, 0}, {128, 2}, {8, 8}}
	rl := []Count{{128, 0}, {128, 120}, {128, 5}, {128, 0}, {128, 2}, {8, 1}}

	s, err := Support(base, rl, 0) // ε = 0: the solved sets
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, want []int) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("preserved", s.Preserved, []int{1, 4, 5})
	check("shrunk", s.Shrunk, []int{0})
	check("expanded", s.Expanded, []int{2})
	check("outside", s.Outside, []int{3})
	if s.Retention != 3.0/4 || s.Discovery != 1.0/4 {
		t.Errorf("retention, discovery = %v, %v; want 0.75, 0.25", s.Retention, s.Discovery)
	}

	// ε = 1/64: c = 1 of 128 (p̂ = 1/128) leaves the support, c = 2 of 128 is exactly at ε and stays.
	s, err = Support(base, rl, 1.0/64)
	if err != nil {
		t.Fatal(err)
	}
	check("preserved ε=1/64", s.Preserved, []int{1, 4, 5})
	check("shrunk ε=1/64", s.Shrunk, []int{})
	check("expanded ε=1/64", s.Expanded, []int{2})
	check("outside ε=1/64", s.Outside, []int{0, 3})

	// ε = 0.2: RL's 1 of 8 (0.125) drops out; 64/128 and 120/128 stay.
	s, _ = Support(base, rl, 0.2)
	check("preserved ε=0.2", s.Preserved, []int{1})
	check("shrunk ε=0.2", s.Shrunk, []int{5})

	// Empty supports give NaN shares, not a division by zero.
	s, _ = Support([]Count{{4, 0}}, []Count{{4, 0}}, 0)
	if !math.IsNaN(s.Retention) || !math.IsNaN(s.Discovery) {
		t.Errorf("empty supports: retention, discovery = %v, %v; want NaN", s.Retention, s.Discovery)
	}

	for _, eps := range []float64{-0.1, 1.5, math.NaN()} {
		if _, err := Support(base, rl, eps); !errors.Is(err, ErrInput) {
			t.Errorf("Support(ε = %v): err = %v, want ErrInput", eps, err)
		}
	}
	if _, err := Support(base, rl[:2], 0); !errors.Is(err, ErrInput) {
		t.Errorf("ragged: err = %v, want ErrInput", err)
	}
	if _, err := Support([]Count{{4, 5}}, []Count{{4, 0}}, 0); !errors.Is(err, ErrInput) {
		t.Errorf("c > n: err = %v, want ErrInput", err)
	}
}

func TestInSupportThresholdRounding(t *testing.T) {
	// 0.01 · 300 is 3.0000000000000004 in float64: c = 3 of 300 is still p̂ = ε.
	if !InSupport(Count{300, 3}, 0.01) {
		t.Error("c = 3 of 300 at ε = 0.01 should be in the support")
	}
	if InSupport(Count{300, 2}, 0.01) {
		t.Error("c = 2 of 300 at ε = 0.01 should not be in the support")
	}
}

func TestCohenKappa(t *testing.T) {
	// Hand-computed: 50 items, rater A says yes to 25, B to 30; 20 agree on yes, 15 on no.
	// p_o = 35/50 = 0.7; p_e = 0.5·0.6 + 0.5·0.4 = 0.5; κ = (0.7 − 0.5)/(1 − 0.5) = 0.4.
	got, err := CohenKappa([][]int{{20, 5}, {10, 15}})
	if err != nil || math.Abs(got-0.4) > 1e-12 {
		t.Errorf("kappa = %v, %v; want 0.4", got, err)
	}
	if got, _ := CohenKappa([][]int{{7, 0}, {0, 3}}); got != 1 {
		t.Errorf("perfect agreement: kappa = %v, want 1", got)
	}
	// Systematic disagreement: p_o = 0, p_e = 0.5 -> κ = −1.
	if got, _ := CohenKappa([][]int{{0, 5}, {5, 0}}); math.Abs(got+1) > 1e-12 {
		t.Errorf("full disagreement: kappa = %v, want -1", got)
	}
	for name, bad := range map[string][][]int{
		"empty":      nil,
		"not square": {{1, 2}, {3}},
		"negative":   {{1, -1}, {0, 1}},
		"no items":   {{0, 0}, {0, 0}},
		"one class":  {{9, 0}, {0, 0}},
	} {
		if _, err := CohenKappa(bad); !errors.Is(err, ErrInput) {
			t.Errorf("%s: err = %v, want ErrInput", name, err)
		}
	}
}

func TestPerplexity(t *testing.T) {
	// Four tokens of log-probability −0.3, −0.6, −0.2, −0.1: mean NLL 0.3, perplexity e^0.3.
	got, err := Perplexity(-1.2, 4)
	if err != nil || math.Abs(got-math.Exp(0.3)) > 1e-12 {
		t.Errorf("Perplexity = %v, %v; want e^0.3", got, err)
	}
	if got, _ := Perplexity(0, 3); got != 1 {
		t.Errorf("certain tokens: perplexity %v, want 1", got)
	}
	for _, bad := range []struct {
		sum float64
		n   int
	}{{-1, 0}, {0.5, 3}, {math.NaN(), 3}} {
		if _, err := Perplexity(bad.sum, bad.n); !errors.Is(err, ErrInput) {
			t.Errorf("Perplexity(%v, %d): err = %v, want ErrInput", bad.sum, bad.n, err)
		}
	}
}

func TestSummarize(t *testing.T) {
	// R: quantile(c(1, 2, 4, 7, 10)) -> 1 2 4 7 10; mean 4.8.
	xs := []float64{7, 1, 10, 4, 2}
	s, err := Summarize(xs)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Summary{N: 5, Min: 1, Q1: 2, Median: 4, Q3: 7, Max: 10, Mean: 4.8}); s != want {
		t.Errorf("Summarize = %+v, want %+v", s, want)
	}
	if xs[0] != 7 {
		t.Error("Summarize sorted its input")
	}
	// R: quantile(c(1, 2, 3, 4)) -> 1 1.75 2.5 3.25 4 (type 7).
	s, _ = Summarize([]float64{4, 3, 2, 1})
	if s.Q1 != 1.75 || s.Median != 2.5 || s.Q3 != 3.25 {
		t.Errorf("quartiles of 1..4 = %v %v %v, want 1.75 2.5 3.25", s.Q1, s.Median, s.Q3)
	}
	for _, bad := range [][]float64{nil, {1, math.NaN()}, {math.Inf(1)}} {
		if _, err := Summarize(bad); !errors.Is(err, ErrInput) {
			t.Errorf("Summarize(%v): err = %v, want ErrInput", bad, err)
		}
	}
}

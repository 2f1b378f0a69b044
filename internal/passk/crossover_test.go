package passk

import (
	"errors"
	"math"
	"testing"
)

func TestCrossoverHandExamples(t *testing.T) {
	b, o := BaseAhead, OtherAhead
	cases := []struct {
		name        string
		ks          []int
		base, other []float64
		want        CrossoverResult
	}{
		{
			// d = -0.2, -0.1, +0.1, +0.1: between k=2 and k=4, t = 0.1/0.2 = 0.5, log2 K = 1.5.
			name: "interpolated", ks: []int{1, 2, 4, 8},
			base: []float64{0.2, 0.5, 0.8, 0.9}, other: []float64{0.4, 0.6, 0.7, 0.8},
			want: CrossoverResult{Found: true, K: math.Sqrt(8), AtSampledK: 4, End: b, Since: 4,
				Crossings: []Crossing{{K: math.Sqrt(8), From: 2, To: 4, Lead: b}}},
		},
		{
			// Uneven spacing: d(4) = -0.3, d(16) = +0.1, t = 0.75, log2 K = 2 + 0.75*2 = 3.5.
			name: "sparse ks", ks: []int{1, 4, 16},
			base: []float64{0.1, 0.4, 0.9}, other: []float64{0.5, 0.7, 0.8},
			want: CrossoverResult{Found: true, K: math.Exp2(3.5), AtSampledK: 16, End: b, Since: 16,
				Crossings: []Crossing{{K: math.Exp2(3.5), From: 4, To: 16, Lead: b}}},
		},
		{
			name: "base ahead at every k", ks: []int{1, 2},
			base: []float64{0.6, 0.95}, other: []float64{0.5, 0.9},
			want: CrossoverResult{Found: true, K: 1, AtSampledK: 1, End: b, Since: 1},
		},
		{
			// HumanEval shape (Mistral 32.50% vs Zephyr 32.38% at k = 1, behind from k = 2):
			// base ahead only at small k is no crossover; the other model leads from k = 2.
			// d(1) = +0.1, d(2) = -0.1: t = 0.5, K = 2^0.5.
			name: "base ahead only at k=1", ks: []int{1, 2, 4},
			base: []float64{0.6, 0.7, 0.8}, other: []float64{0.5, 0.8, 0.9},
			want: CrossoverResult{End: o, Since: 2, Crossings: []Crossing{{K: math.Sqrt2, From: 1, To: 2, Lead: o}}},
		},
		{
			name: "never", ks: []int{1, 2, 4},
			base: []float64{0.1, 0.2, 0.3}, other: []float64{0.5, 0.6, 0.7},
			want: CrossoverResult{End: o, Since: 1},
		},
		{
			// Touching at one k and falling behind again is not a crossover.
			name: "touch", ks: []int{1, 2, 4},
			base: []float64{0.1, 0.5, 0.6}, other: []float64{0.3, 0.5, 0.7},
			want: CrossoverResult{End: o, Since: 1},
		},
		{
			// Both reach 100% at k max after base was behind: the curves meet, they do not cross.
			name: "tie at the top", ks: []int{1, 2, 4, 8},
			base: []float64{0.3, 0.6, 0.9, 1}, other: []float64{0.5, 0.8, 0.95, 1},
			want: CrossoverResult{End: Even, Since: 8},
		},
		{
			// Base ahead, then both at 100%: the tie at the top does not end the stretch.
			name: "ahead then both at 100%", ks: []int{1, 2, 4, 8},
			base: []float64{0.3, 0.8, 1, 1}, other: []float64{0.5, 0.7, 0.9, 1},
			want: CrossoverResult{Found: true, K: math.Exp2(2.0 / 3), AtSampledK: 2, End: Even, Since: 8,
				Crossings: []Crossing{{K: math.Exp2(2.0 / 3), From: 1, To: 2, Lead: b}}},
		},
		{
			name: "identical", ks: []int{1, 2},
			base: []float64{0.3, 0.5}, other: []float64{0.3, 0.5},
			want: CrossoverResult{End: Even, Since: 1},
		},
		{
			// Rounding noise below CrossoverTol is a tie, not "base still below" nor "base ahead".
			name: "within tolerance", ks: []int{1, 2, 4},
			base: []float64{0.2, 0.4, 1 - 1e-15}, other: []float64{0.5, 0.6, 1},
			want: CrossoverResult{End: Even, Since: 4},
		},
		{
			// Base behind, equal at k = 2, ahead from 4: k* is where they meet.
			name: "meet then ahead", ks: []int{1, 2, 4},
			base: []float64{0.2, 0.5, 0.8}, other: []float64{0.3, 0.5, 0.7},
			want: CrossoverResult{Found: true, K: 2, AtSampledK: 4, End: b, Since: 2,
				Crossings: []Crossing{{K: 2, From: 1, To: 2, Lead: b}}},
		},
		{
			// Three changes of lead: behind, ahead at 2, behind at 4, ahead from 8.
			// d = -0.1, +0.1, -0.1, +0.3, +0.2: crossings at 2^0.5, 2^1.5, 2^2.25.
			name: "multiple crossings", ks: []int{1, 2, 4, 8, 16},
			base: []float64{0.4, 0.6, 0.7, 0.9, 0.95}, other: []float64{0.5, 0.5, 0.8, 0.6, 0.75},
			want: CrossoverResult{Found: true, K: math.Exp2(2.25), AtSampledK: 8, End: b, Since: 8,
				Crossings: []Crossing{{K: math.Sqrt2, From: 1, To: 2, Lead: b}, {K: math.Exp2(1.5), From: 2, To: 4, Lead: o},
					{K: math.Exp2(2.25), From: 4, To: 8, Lead: b}}},
		},
		{
			// Ahead at small k, behind in the middle, ahead again at the top.
			name: "ahead, behind, ahead", ks: []int{1, 2, 4},
			base: []float64{0.6, 0.6, 0.9}, other: []float64{0.5, 0.7, 0.8},
			want: CrossoverResult{Found: true, K: math.Exp2(1.5), AtSampledK: 4, End: b, Since: 4,
				Crossings: []Crossing{{K: math.Sqrt2, From: 1, To: 2, Lead: o}, {K: math.Exp2(1.5), From: 2, To: 4, Lead: b}}},
		},
	}
	for _, tc := range cases {
		got, err := Crossover(tc.ks, tc.base, tc.other)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		same := got.Found == tc.want.Found && got.AtSampledK == tc.want.AtSampledK && got.End == tc.want.End &&
			got.Since == tc.want.Since && math.Abs(got.K-tc.want.K) <= 1e-12 && len(got.Crossings) == len(tc.want.Crossings)
		for i := 0; same && i < len(got.Crossings); i++ {
			g, w := got.Crossings[i], tc.want.Crossings[i]
			same = g.From == w.From && g.To == w.To && g.Lead == w.Lead && math.Abs(g.K-w.K) <= 1e-12
		}
		if !same {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
		// The allocation-free core used per bootstrap draw agrees.
		if f, k, at := crossover(tc.ks, tc.base, tc.other); f != got.Found || k != got.K || at != got.AtSampledK {
			t.Errorf("%s: crossover() = %v %v %v, Crossover %+v", tc.name, f, k, at, got)
		}
	}
}

// TestCrossoverNoneUpToN: a base model behind at every k up to k = n, as a full curve from
// counts (CurveAll), has no crossover; the other model leads from k = 1.
func TestCrossoverNoneUpToN(t *testing.T) {
	base := []Count{{8, 1}, {8, 0}, {8, 2}}
	rl := []Count{{8, 4}, {8, 1}, {8, 2}}
	cb, _ := CurveAll(base)
	cr, _ := CurveAll(rl)
	got, err := Crossover(AllKs(8), cb, cr)
	if err != nil {
		t.Fatal(err)
	}
	if got.Found || got.End != OtherAhead || got.Since != 1 || len(got.Crossings) != 0 {
		t.Errorf("got %+v, want no crossover, other model ahead from k = 1", got)
	}
}

func TestCrossoverErrors(t *testing.T) {
	if _, err := Crossover([]int{1, 2}, []float64{1}, []float64{1, 2}); !errors.Is(err, ErrInput) {
		t.Errorf("length mismatch: %v", err)
	}
	if _, err := Crossover([]int{2, 1}, []float64{1, 1}, []float64{1, 2}); !errors.Is(err, ErrInput) {
		t.Errorf("decreasing ks: %v", err)
	}
	if _, err := Crossover(nil, nil, nil); !errors.Is(err, ErrInput) {
		t.Errorf("empty: %v", err)
	}
}

func TestSamplingEfficiencyGap(t *testing.T) {
	base := []float64{0.5, 0.7, 0.9}
	rl := []float64{0.8, 0.85, 0.88}
	got, err := SamplingEfficiencyGap(base, rl, 3)
	if err != nil || math.Abs(got-0.1) > 1e-15 { // 0.9 - 0.8
		t.Errorf("ΔSE = %v, %v; want 0.1", got, err)
	}
	got, err = SamplingEfficiencyGap(base, rl, 1)
	if err != nil || math.Abs(got+0.3) > 1e-15 {
		t.Errorf("ΔSE at k=1 = %v, %v; want -0.3", got, err)
	}
	if _, err := SamplingEfficiencyGap(base, rl, 4); !errors.Is(err, ErrInput) {
		t.Errorf("k beyond curve: %v", err)
	}
}

package passk

import (
	"errors"
	"math"
	"testing"
)

func TestCrossoverHandExamples(t *testing.T) {
	cases := []struct {
		name        string
		ks          []int
		base, other []float64
		want        CrossoverResult
	}{
		{
			// d = -0.2, -0.1, +0.1: between k=2 and k=4, t = 0.1/0.2 = 0.5, log2 K = 1.5.
			name: "interpolated", ks: []int{1, 2, 4, 8},
			base: []float64{0.2, 0.5, 0.8, 0.9}, other: []float64{0.4, 0.6, 0.7, 0.8},
			want: CrossoverResult{Found: true, K: math.Sqrt(8), AtSampledK: 4},
		},
		{
			// Uneven spacing: d(4) = -0.3, d(16) = +0.1, t = 0.75, log2 K = 2 + 0.75*2 = 3.5.
			name: "sparse ks", ks: []int{1, 4, 16},
			base: []float64{0.1, 0.4, 0.9}, other: []float64{0.5, 0.7, 0.8},
			want: CrossoverResult{Found: true, K: math.Exp2(3.5), AtSampledK: 16},
		},
		{
			name: "base ahead at k=1", ks: []int{1, 2},
			base: []float64{0.6, 0.7}, other: []float64{0.5, 0.9},
			want: CrossoverResult{Found: true, K: 1, AtSampledK: 1},
		},
		{
			name: "never", ks: []int{1, 2, 4},
			base: []float64{0.1, 0.2, 0.3}, other: []float64{0.5, 0.6, 0.7},
			want: CrossoverResult{},
		},
		{
			// Touching counts as reaching; K is the touching k exactly.
			name: "touch", ks: []int{1, 2, 4},
			base: []float64{0.1, 0.5, 0.6}, other: []float64{0.3, 0.5, 0.7},
			want: CrossoverResult{Found: true, K: 2, AtSampledK: 2, Tie: true},
		},
		{
			name: "identical", ks: []int{1, 2},
			base: []float64{0.3, 0.5}, other: []float64{0.3, 0.5},
			want: CrossoverResult{Found: true, K: 1, AtSampledK: 1, Tie: true},
		},
		{
			// Rounding noise below CrossoverTol is a tie, not "base still below".
			name: "within tolerance", ks: []int{1, 2, 4},
			base: []float64{0.2, 0.4, 1 - 1e-15}, other: []float64{0.5, 0.6, 1},
			want: CrossoverResult{Found: true, K: 4, AtSampledK: 4, Tie: true},
		},
	}
	for _, tc := range cases {
		got, err := Crossover(tc.ks, tc.base, tc.other)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.Found != tc.want.Found || got.AtSampledK != tc.want.AtSampledK || got.Tie != tc.want.Tie ||
			math.Abs(got.K-tc.want.K) > 1e-12 {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
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

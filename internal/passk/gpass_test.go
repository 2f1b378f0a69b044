package passk

import (
	"math"
	"testing"
)

// By hand. n = 4, c = 2, k = 2: P(X ≥ 1) = 1 − C(2,2)/C(4,2) = 5/6, P(X ≥ 2) = 1/6.
// n = 8, c = 5, k = 4: P(X ≥ 3) = (C(5,3)·C(3,1) + C(5,4))/C(8,4) = 35/70, P(X ≥ 4) = 5/70;
// mG-Pass@4 = (2/4)·(35/70 + 5/70) = 2/7.
func TestGPassAtKByHand(t *testing.T) {
	for _, tc := range []struct {
		n, c, k int
		tau     float64
		want    float64
	}{
		{4, 2, 2, 0, 5.0 / 6}, {4, 2, 2, 0.5, 5.0 / 6}, {4, 2, 2, 1, 1.0 / 6},
		{8, 5, 4, 0.75, 0.5}, {8, 5, 4, 1, 5.0 / 70}, {8, 5, 4, 0.5, (10*3 + 10*3 + 5) / 70.0},
		{8, 0, 4, 0, 0}, {8, 8, 4, 1, 1}, {8, 6, 4, 0.25, 1}, // n − c = 2 < k: at least 2 correct in any draw
	} {
		got, err := GPassAtK(tc.n, tc.c, tc.k, tc.tau)
		if err != nil || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("G-Pass@%d_%v(n=%d, c=%d) = %v, %v; want %v", tc.k, tc.tau, tc.n, tc.c, got, err, tc.want)
		}
	}
	if got, _ := MGPassAtK(8, 5, 4); math.Abs(got-2.0/7) > 1e-12 {
		t.Errorf("mG-Pass@4 = %v, want 2/7", got)
	}
	if got, _ := MGPassAtK(4, 2, 2); math.Abs(got-1.0/6) > 1e-12 {
		t.Errorf("mG-Pass@2 = %v, want 1/6", got)
	}
	if got, _ := MGPassAtK(4, 4, 1); got != 0 {
		t.Errorf("mG-Pass@1 = %v, want 0 (an empty sum, as lighteval)", got)
	}
	// G-Pass@k at τ = 0 is the unbiased pass@k, and at τ = 1 pass^k = C(c,k)/C(n,k).
	for _, x := range []Count{{N: 16, C: 3}, {N: 128, C: 40}, {N: 1024, C: 1}} {
		for _, k := range []int{1, 2, 8, 16} {
			g, _ := GPassAtK(x.N, x.C, k, 0)
			p, _ := PassAtK(x.N, x.C, k)
			if math.Abs(g-p) > 1e-9 {
				t.Errorf("n=%d c=%d k=%d: G-Pass τ=0 %v, pass@k %v", x.N, x.C, k, g, p)
			}
		}
	}
	if _, err := GPassAtK(4, 2, 5, 0.5); err == nil {
		t.Error("k > n accepted")
	}
	if _, err := GPassAtK(4, 2, 2, 1.5); err == nil {
		t.Error("τ > 1 accepted")
	}
}

// Tails agrees with the term-by-term sum, including where the first terms
// would underflow a product (n = 1,024, c = 512, k = 512), and
// GPassCurve averages the per-problem figures.
func TestTailsAndGPassCurve(t *testing.T) {
	for _, x := range [][3]int{{8, 5, 4}, {4, 2, 2}, {1024, 512, 512}, {1024, 3, 1024}, {128, 127, 64}, {16, 0, 8}} {
		n, c, k := x[0], x[1], x[2]
		tl, err := Tails(n, c, k)
		if err != nil {
			t.Fatal(err)
		}
		for m := 0; m <= k+1; m++ {
			want, _ := AtLeast(n, c, k, m)
			if math.Abs(tl[m]-want) > 1e-9 {
				t.Errorf("n=%d c=%d k=%d: tail %d = %v, want %v", n, c, k, m, tl[m], want)
			}
		}
	}
	counts := []Count{{N: 8, C: 5}, {N: 8, C: 0}}
	g, mg, err := GPassCurve(counts, []int{4}, []float64{0.75, 1})
	if err != nil {
		t.Fatal(err)
	}
	// (35/70 + 0)/2 and (5/70 + 0)/2; mG-Pass@4 (2/7 + 0)/2.
	if math.Abs(g[0][0]-0.25) > 1e-12 || math.Abs(g[0][1]-5.0/140) > 1e-12 || math.Abs(mg[0]-1.0/7) > 1e-12 {
		t.Errorf("curve %v %v", g, mg)
	}
}

// Two problems, (8, 5) and (8, 0): a resample holds the first twice (chance 1/4), once, or not
// at all (1/4), so pass^4 (k = 4, τ = 1) is 5/70, 5/140 or 0 and with 2,000 draws the 95%
// interval's ends are 0 and 5/70; mG-Pass@4's are 0 and 2/7.
func TestGPassBootstrapByHand(t *testing.T) {
	counts := []Count{{N: 8, C: 5}, {N: 8, C: 0}}
	b, err := GPassBootstrap(counts, []int{4}, []float64{0.75, 1}, 2000, 3, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if b.Lo[0][1] != 0 || math.Abs(b.Hi[0][1]-5.0/70) > 1e-12 || b.MGLo[0] != 0 || math.Abs(b.MGHi[0]-2.0/7) > 1e-12 {
		t.Errorf("bands %+v", b)
	}
	if math.Abs(b.Hi[0][0]-0.5) > 1e-12 {
		t.Errorf("G-Pass@4_0.75 high end %v, want 35/70", b.Hi[0][0])
	}
	// Same seed, same draws; one problem type: the interval is the point.
	again, _ := GPassBootstrap(counts, []int{4}, []float64{0.75, 1}, 2000, 3, 0.95)
	if again.Lo[0][0] != b.Lo[0][0] || again.Hi[0][0] != b.Hi[0][0] {
		t.Errorf("not reproducible")
	}
	one, _ := GPassBootstrap([]Count{{N: 8, C: 5}, {N: 8, C: 5}}, []int{4}, []float64{1}, 100, 3, 0.95)
	if math.Abs(one.Lo[0][0]-5.0/70) > 1e-12 || math.Abs(one.Hi[0][0]-5.0/70) > 1e-12 {
		t.Errorf("one type: %+v", one)
	}
	if _, err := GPassBootstrap(counts, []int{4}, []float64{1}, 0, 3, 0.95); err == nil {
		t.Error("no draws: no error")
	}
}

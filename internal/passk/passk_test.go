package passk

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// relNear compares with a relative tolerance (absolute near 0).
func relNear(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(math.Abs(want), 1e-300)
}

func mustPass(t *testing.T, n, c, k int) float64 {
	t.Helper()
	v, err := PassAtK(n, c, k)
	if err != nil {
		t.Fatalf("PassAtK(%d,%d,%d): %v", n, c, k, err)
	}
	return v
}

func TestPassAtKHandComputed(t *testing.T) {
	// 1 - C(3,2)/C(5,2) = 1 - 3/10.
	if got := mustPass(t, 5, 2, 2); !relNear(got, 0.7, 1e-15) {
		t.Errorf("pass@2(n=5,c=2) = %.17g, want 0.7", got)
	}
	// 1 - C(4,1)/C(5,1) = 1/5; 1 - C(2,3)/C(5,3) = 1 (n-c < k).
	if got := mustPass(t, 5, 1, 1); !relNear(got, 0.2, 1e-15) {
		t.Errorf("pass@1(n=5,c=1) = %v, want 0.2", got)
	}
	if got := mustPass(t, 5, 3, 3); got != 1 {
		t.Errorf("pass@3(n=5,c=3) = %v, want exactly 1", got)
	}
	const n = 1024
	for _, k := range []int{1, 2, 3, 10, 100, 512, 1000, 1023, 1024} {
		// c = 1: 1 - (n-k)/n = k/n exactly.
		if got, want := mustPass(t, n, 1, k), float64(k)/n; !relNear(got, want, 4e-16) {
			t.Errorf("pass@%d(n=1024,c=1) = %.17g, want %.17g", k, got, want)
		}
		if got := mustPass(t, n, 0, k); got != 0 {
			t.Errorf("pass@%d(n=1024,c=0) = %v, want exactly 0", k, got)
		}
		if got := mustPass(t, n, n, k); got != 1 {
			t.Errorf("pass@%d(n=1024,c=1024) = %v, want exactly 1", k, got)
		}
		// c = 2: 1 - (n-k)(n-k-1) / (n(n-1)), with the subtraction done in integers.
		want2 := float64(n*(n-1)-(n-k)*(n-k-1)) / float64(n*(n-1))
		if got := mustPass(t, n, 2, k); !relNear(got, want2, 1e-15) {
			t.Errorf("pass@%d(n=1024,c=2) = %.17g, want %.17g", k, got, want2)
		}
	}
}

// exactPass computes 1 - C(n-c,k)/C(n,k) in exact rational arithmetic.
func exactPass(n, c, k int) float64 {
	if n-c < k {
		return 1
	}
	num := new(big.Int).Binomial(int64(n-c), int64(k))
	den := new(big.Int).Binomial(int64(n), int64(k))
	q := new(big.Rat).SetFrac(num, den)
	f, _ := new(big.Rat).Sub(big.NewRat(1, 1), q).Float64()
	return f
}

func TestPassAtKMatchesExactRational(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		n := 1 + r.IntN(4096)
		c, k := r.IntN(n+1), 1+r.IntN(n)
		if r.IntN(3) == 0 { // many small results, where cancellation would hurt
			c, k = r.IntN(min(n, 4)+1), 1+r.IntN(min(n, 8))
		}
		got, want := mustPass(t, n, c, k), exactPass(n, c, k)
		if !relNear(got, want, 2e-15) {
			t.Errorf("pass@%d(n=%d,c=%d) = %.17g, exact %.17g", k, n, c, got, want)
		}
	}
}

func TestPassAtKErrors(t *testing.T) {
	for _, a := range [][3]int{{5, 2, 0}, {5, 2, 6}, {5, -1, 1}, {5, 6, 1}, {0, 0, 1}, {-3, 0, 1}} {
		if _, err := PassAtK(a[0], a[1], a[2]); !errors.Is(err, ErrInput) {
			t.Errorf("PassAtK(%v) error = %v, want ErrInput", a, err)
		}
	}
}

func TestPassAtKBiased(t *testing.T) {
	got, err := PassAtKBiased(5, 2, 2)
	if err != nil || !relNear(got, 0.64, 1e-15) { // 1 - 0.6^2
		t.Errorf("biased pass@2(5,2) = %v, %v; want 0.64", got, err)
	}
	got, err = PassAtKBiased(4, 1, 8) // k > n allowed: 1 - 0.75^8
	if err != nil || !relNear(got, 1-math.Pow(0.75, 8), 1e-15) {
		t.Errorf("biased pass@8(4,1) = %v, %v", got, err)
	}
	if unb := mustPass(t, 5, 2, 2); unb <= 0.64 {
		t.Errorf("unbiased %v should exceed the biased 0.64", unb)
	}
	if _, err := PassAtKBiased(4, 5, 1); !errors.Is(err, ErrInput) {
		t.Errorf("c > n: error %v", err)
	}
}

func TestCurveHandComputed(t *testing.T) {
	counts := []Count{{4, 1}, {4, 4}, {4, 0}}
	// pass@1 = (1/4 + 1 + 0)/3; pass@2 = ((1 - 3/6) + 1 + 0)/3; pass@3 = ((1 - 1/4) + 1)/3; pass@4 = 2/3.
	want := []float64{1.25 / 3, 1.5 / 3, 1.75 / 3, 2.0 / 3}
	got, err := CurveAll(counts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("CurveAll length %d, want 4", len(got))
	}
	for i := range want {
		if !near(got[i], want[i], 1e-15) {
			t.Errorf("pass@%d = %v, want %v", i+1, got[i], want[i])
		}
	}
	sub, err := Curve(counts, []int{4, 2})
	if err != nil || !near(sub[0], want[3], 1e-15) || !near(sub[1], want[1], 1e-15) {
		t.Errorf("Curve(ks=4,2) = %v, %v", sub, err)
	}
	// Problems with different n: the curve stops at the smallest n.
	mixed, err := CurveAll([]Count{{2, 1}, {8, 0}})
	if err != nil || len(mixed) != 2 || !near(mixed[1], 0.5, 1e-15) {
		t.Errorf("CurveAll mixed n = %v, %v; want length 2 ending at 0.5", mixed, err)
	}
	if _, err := Curve(counts, []int{5}); !errors.Is(err, ErrInput) {
		t.Errorf("k > n: error %v", err)
	}
	if _, err := CurveAll(nil); !errors.Is(err, ErrInput) {
		t.Errorf("no problems: error %v", err)
	}
}

func TestCurveAllMatchesPassAtK(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	counts := make([]Count, 50)
	for i := range counts {
		n := 200 + r.IntN(2000)
		counts[i] = Count{n, r.IntN(n + 1)}
		if i%5 == 0 {
			counts[i].C = r.IntN(3)
		}
	}
	curve, err := CurveAll(counts)
	if err != nil {
		t.Fatal(err)
	}
	m, err := PerProblemMatrix(counts, AllKs(len(curve)))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 2, 7, 64, 199, len(curve)} {
		var mean float64
		for i, x := range counts {
			v := mustPass(t, x.N, x.C, k)
			if !relNear(m[i][k-1], v, 1e-12) {
				t.Errorf("matrix[%d][k=%d] = %.17g, PassAtK %.17g", i, k, m[i][k-1], v)
			}
			mean += v
		}
		mean /= float64(len(counts))
		if !relNear(curve[k-1], mean, 1e-12) {
			t.Errorf("CurveAll pass@%d = %.17g, mean PassAtK %.17g", k, curve[k-1], mean)
		}
	}
}

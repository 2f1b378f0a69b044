package passk

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactFisher enumerates the tables with the observed margins in exact rational arithmetic and
// sums the probabilities not larger than the observed one.
func exactFisher(c1, n1, c2, n2 int) float64 {
	m := c1 + c2
	prob := func(x int) *big.Rat {
		num := new(big.Int).Mul(new(big.Int).Binomial(int64(n1), int64(x)), new(big.Int).Binomial(int64(n2), int64(m-x)))
		return new(big.Rat).SetFrac(num, new(big.Int).Binomial(int64(n1+n2), int64(m)))
	}
	obs := prob(c1)
	sum := new(big.Rat)
	for x := max(0, m-n2); x <= min(n1, m); x++ {
		if p := prob(x); p.Cmp(obs) <= 0 {
			sum.Add(sum, p)
		}
	}
	f, _ := sum.Float64()
	return f
}

func mustFisher(t *testing.T, c1, n1, c2, n2 int) float64 {
	t.Helper()
	p, err := FisherExact(c1, n1, c2, n2)
	if err != nil {
		t.Fatalf("FisherExact(%d,%d,%d,%d): %v", c1, n1, c2, n2, err)
	}
	return p
}

func TestFisherExactKnownValues(t *testing.T) {
	cases := []struct {
		c1, n1, c2, n2 int
		want, tol      float64
		what           string
	}{
		// Fisher's lady tasting tea, table [[3,1],[1,3]]: hypergeometric 1,16,36,16,1 over 70,
		// two-sided sums all but 36 -> 34/70 (R: fisher.test(matrix(c(3,1,1,3),2)) p = 0.4857).
		{3, 4, 1, 4, 34.0 / 70, 1e-14, "tea tasting"},
		// R's ?fisher.test example Convictions = matrix(c(2,10,15,3), 2): rows (2,15) and (10,3);
		// R prints p-value = 0.0005367.
		{2, 17, 10, 13, 0.0005367, 5e-8, "R Convictions example"},
		// [[10,0],[0,10]]: the two extreme tables, each 1/C(20,10).
		{10, 10, 0, 10, 2.0 / 184756, 1e-18, "perfect separation"},
		// A base-only solve with one correct sample in 128 against 0/128 is no evidence: p = 1.
		{1, 128, 0, 128, 1, 1e-15, "single lucky solve"},
		{5, 10, 5, 10, 1, 1e-15, "identical rows"},
	}
	for _, tc := range cases {
		if got := mustFisher(t, tc.c1, tc.n1, tc.c2, tc.n2); math.Abs(got-tc.want) > tc.tol {
			t.Errorf("%s: p = %.10g, want %.10g", tc.what, got, tc.want)
		}
	}
}

func TestFisherExactMatchesEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		n1, n2 := 1+r.IntN(60), 1+r.IntN(60)
		c1, c2 := r.IntN(n1+1), r.IntN(n2+1)
		got, want := mustFisher(t, c1, n1, c2, n2), exactFisher(c1, n1, c2, n2)
		if !relNear(got, want, 1e-9) {
			t.Errorf("FisherExact(%d/%d vs %d/%d) = %.15g, enumeration %.15g", c1, n1, c2, n2, got, want)
		}
		if sym := mustFisher(t, c2, n2, c1, n1); !relNear(sym, got, 1e-12) {
			t.Errorf("not symmetric in rows: %v vs %v", sym, got)
		}
	}
	// Large n stays finite and agrees with enumeration.
	got, want := mustFisher(t, 30, 1024, 55, 1024), exactFisher(30, 1024, 55, 1024)
	if !relNear(got, want, 1e-9) {
		t.Errorf("n = 1024: %.15g, enumeration %.15g", got, want)
	}
	if _, err := FisherExact(3, 2, 0, 1); !errors.Is(err, ErrInput) {
		t.Errorf("c > n: %v", err)
	}
}

func TestHolm(t *testing.T) {
	// Holm (1979) as in the textbook / Wikipedia example: p = 0.01, 0.04, 0.03, 0.005.
	// Sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> running max
	// 0.02, 0.03, 0.06, 0.06 (R: p.adjust(c(.01,.04,.03,.005), "holm") = 0.03 0.06 0.06 0.02).
	got, err := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Errorf("Holm = %v, want %v", got, want)
			break
		}
	}
	capped, err := Holm([]float64{0.6, 0.7, 0.001}) // 0.003, 2*0.6 capped at 1, then max(1, 0.7)
	if err != nil || capped[0] != 1 || capped[1] != 1 || math.Abs(capped[2]-0.003) > 1e-15 {
		t.Errorf("Holm capped = %v, %v; want [1 1 0.003]", capped, err)
	}
	if _, err := Holm([]float64{0.1, math.NaN()}); !errors.Is(err, ErrInput) {
		t.Errorf("NaN: %v", err)
	}
}

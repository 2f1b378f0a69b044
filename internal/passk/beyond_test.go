package passk

import (
	"math"
	"testing"
)

// A prior that is a single point mass gives exact answers by hand.
func TestBeyondHandComputed(t *testing.T) {
	// Beta(1, 1) (uniform), no point masses. Posterior after c of n: Beta(1+c, 1+n-c).
	// E[(1-p)^k] = B(1+c, 1+n-c+k)/B(1+c, 1+n-c). For n = 2, c = 1, k = 3:
	// B(2, 5)/B(2, 2) = (1/30)/(1/6) = 1/5, so pass@3 = 4/5.
	u := Prior{Alpha: 1, Beta: 1}
	v, ext, err := PassAtKBeyond(Count{N: 2, C: 1}, 3, u)
	if err != nil || !ext || math.Abs(v-0.8) > 1e-12 {
		t.Fatalf("pass@3 of 1/2 under a uniform prior = %v (extrapolated %v, %v), want 0.8", v, ext, err)
	}
	// Within n the unbiased estimator is used: pass@2 of 1/2 = 1.
	if v, ext, _ := PassAtKBeyond(Count{N: 2, C: 1}, 2, u); ext || v != 1 {
		t.Fatalf("pass@2 of 1/2 = %v (extrapolated %v), want 1 (unbiased)", v, ext)
	}
	// Variance: E[(1-p)^6] = B(2, 8)/B(2, 2) = (1/72)/(1/6) = 1/12; Var = 1/12 - 1/25.
	m, va := u.posterior(Count{N: 2, C: 1}).passMeanVar(3)
	if math.Abs(m-0.8) > 1e-12 || math.Abs(va-(1.0/12-1.0/25)) > 1e-12 {
		t.Fatalf("mean %v var %v, want 0.8 and %v", m, va, 1.0/12-1.0/25)
	}
	// Point masses: a problem never solved in 10 under Zero = 0.5, Beta(1, 1):
	// P(c=0 | Beta) = 1/11, so w0 = 0.5 / (0.5 + 0.5/11) = 11/12, and
	// E[(1-p)^k] = 11/12 + (1/12) * (11/(11+k)).
	p := Prior{Zero: 0.5, Alpha: 1, Beta: 1}
	v, _, _ = PassAtKBeyond(Count{N: 10, C: 0}, 20, p)
	want := 1 - (11.0/12 + (1.0/12)*(11.0/31))
	if math.Abs(v-want) > 1e-12 {
		t.Fatalf("pass@20 of 0/10 with a point mass at 0 = %v, want %v", v, want)
	}
}

func TestBeyondCurveAndRows(t *testing.T) {
	counts := []Count{{4, 0}, {4, 4}, {8, 2}, {16, 5}}
	prior, err := FitPrior(counts)
	if err != nil {
		t.Fatal(err)
	}
	ks := []int{1, 4, 8, 16, 32}
	b, err := Beyond(counts, ks, prior)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := BeyondRows(counts, ks, prior)
	if err != nil {
		t.Fatal(err)
	}
	for j := range ks {
		var mean float64
		for i := range counts {
			mean += rows[i][j] / 4
		}
		if math.Abs(mean-b.PassAtK[j]) > 1e-12 {
			t.Errorf("k=%d: rows mean %v, curve %v", ks[j], mean, b.PassAtK[j])
		}
		if !(b.Lo[j] <= b.PassAtK[j] && b.PassAtK[j] <= b.Hi[j]) {
			t.Errorf("k=%d: %v outside its interval [%v, %v]", ks[j], b.PassAtK[j], b.Lo[j], b.Hi[j])
		}
	}
	// Shares extrapolated: k=1,4: none; 8: two of four; 16: three; 32: all.
	for j, want := range []float64{0, 0, 0.5, 0.75, 1} {
		if b.Extrapolated[j] != want {
			t.Errorf("k=%d: extrapolated share %v, want %v", ks[j], b.Extrapolated[j], want)
		}
	}
	// At k <= 4 every problem uses the unbiased estimator: the curve is Curve's.
	c, _ := Curve(counts, []int{1, 4})
	if math.Abs(c[0]-b.PassAtK[0]) > 1e-12 || math.Abs(c[1]-b.PassAtK[1]) > 1e-12 {
		t.Errorf("within n the curve %v differs from the unbiased %v", b.PassAtK[:2], c)
	}
	if _, err := Beyond(nil, ks, prior); err == nil {
		t.Error("no counts: want an error")
	}
	if _, err := Beyond(counts, []int{0}, prior); err == nil {
		t.Error("k = 0: want an error")
	}
}

// The fit recovers a known prior from many simulated problems.
func TestFitPriorRecovers(t *testing.T) {
	truth := Prior{Zero: 0.1, One: 0.2, Alpha: 0.7, Beta: 1.5}
	// Expected counts at n = 64: 4,000 problems laid out by the predictive distribution.
	pred := truth.predictive(64)
	var counts []Count
	for c, pr := range pred {
		for range int(math.Round(4000 * pr)) {
			counts = append(counts, Count{N: 64, C: c})
		}
	}
	got, err := FitPrior(counts)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.Zero-truth.Zero) > 0.02 || math.Abs(got.One-truth.One) > 0.02 ||
		math.Abs(got.Alpha-truth.Alpha) > 0.1 || math.Abs(got.Beta-truth.Beta) > 0.2 {
		t.Errorf("fit %+v, want about %+v", got, truth)
	}
	if got.Fit.Poor() {
		t.Errorf("a fit to its own predictive distribution called poor: %+v", got.Fit)
	}
}

// VarianceReduction is zero for a settled problem and positive for an uncertain one.
func TestVarianceReduction(t *testing.T) {
	p := Prior{Zero: 0.05, One: 0.3, Alpha: 0.5, Beta: 0.5}
	ks := []int{1, 2, 4, 8, 16, 32, 64, 128}
	settled := VarianceReduction(Count{N: 128, C: 128}, 8, ks, p)
	open := VarianceReduction(Count{N: 16, C: 1}, 8, ks, p)
	if settled > 1e-6 || open < 1e-3 {
		t.Errorf("reduction settled %v, open %v", settled, open)
	}
	if VarianceReduction(Count{N: 16, C: 1}, 0, ks, p) != 0 {
		t.Error("no samples added: want no reduction")
	}
}

// Beyond's interval includes the extrapolation error of the prior it is given: with a prior
// far from the counts (most of its mass near p = 1 while the counts say rates are low), the
// estimate past n moves far from the one under the prior that made the counts, and the interval
// widens to reach it; the right prior's interval is narrower. (Neither is narrow at 4n and 16n:
// counts at n = 16 cannot tell rates of 0.001 from 0, and the g-model's uncertainty says so.)
func TestBeyondIntervalIncludesModelError(t *testing.T) {
	truth := Prior{Zero: 0.1, One: 0.1, Alpha: 0.5, Beta: 4}
	counts := predictiveCounts(truth, 16, 1000)
	ks := []int{8, 64, 256}
	right, err := Beyond(counts, ks, truth)
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := Beyond(counts, ks, Prior{Alpha: 5, Beta: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	// k = 8 <= n: both use the unbiased estimator, so the same value and interval.
	if right.PassAtK[0] != wrong.PassAtK[0] || right.Lo[0] != wrong.Lo[0] || right.Hi[0] != wrong.Hi[0] {
		t.Errorf("k = 8 within n: the prior changed the estimate or its interval: %+v vs %+v", right, wrong)
	}
	for j, k := range ks[1:] {
		j++
		gap := wrong.PassAtK[j] - right.PassAtK[j]
		if gap < 0.05 {
			t.Fatalf("pass@%d: the wrong prior's estimate is only %.3f above the right one's: the test needs a wrong prior", k, gap)
		}
		if !(wrong.Lo[j] <= right.PassAtK[j]) {
			t.Errorf("pass@%d: the wrong prior's interval [%.4f, %.4f] misses the right prior's %.4f", k, wrong.Lo[j], wrong.Hi[j], right.PassAtK[j])
		}
		if !(right.Lo[j] <= right.PassAtK[j] && right.PassAtK[j] <= right.Hi[j]) || right.Hi[j]-right.Lo[j] >= wrong.Hi[j]-wrong.Lo[j] {
			t.Errorf("pass@%d: the right prior's interval [%.4f, %.4f] around %.4f, the wrong one's [%.4f, %.4f]: want the right one narrower",
				k, right.Lo[j], right.Hi[j], right.PassAtK[j], wrong.Lo[j], wrong.Hi[j])
		}
	}
}

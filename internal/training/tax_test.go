package training

import (
	"math"
	"testing"

	"github.com/reach-lab/reach/internal/passk"
)

// By hand, K = 4 over three problems with n = 4:
//
//	c = 2: pass@1..4 = 1/2, 5/6, 1, 1  → a = 1/2 + 1/6 + 0 = 2/3
//	c = 0: all 0 → a = 0;  c = 4: all 1 → a = 0
//
// A = (2/3)/3 = 2/9; pass@1 = (1/2 + 0 + 1)/3 = 1/2; S = (2/9)/(3 · 1/2) = 4/27.
func TestSharpeningTax(t *testing.T) {
	counts := []passk.Count{{N: 4, C: 2}, {N: 4, C: 0}, {N: 4, C: 4}}
	tax, err := SharpeningTax(counts, 4)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(tax.A-2.0/9) > 1e-12 || !tax.HasS || math.Abs(tax.S-4.0/27) > 1e-12 || tax.Always != 1 || tax.Enough != 1 || tax.Never != 1 {
		t.Errorf("tax %+v; want A 2/9, S 4/27, 1/1/1", tax)
	}
	// pass@1 = 1: S is undefined, A is 0.
	if tax, _ := SharpeningTax([]passk.Count{{N: 2, C: 2}}, 2); tax.HasS || tax.A != 0 {
		t.Errorf("all solved: %+v", tax)
	}
	if _, err := SharpeningTax(counts, 5); err == nil {
		t.Error("K above n accepted")
	}
	// The difference: an RL model solving the c = 2 problem always (a = 0):
	// A_base − A_rl = 2/9, and the paired interval holds it.
	rl := []passk.Count{{N: 4, C: 4}, {N: 4, C: 0}, {N: 4, C: 4}}
	d, err := SharpeningTaxDiff(counts, rl, 4, 2000, 7)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(d.A-2.0/9) > 1e-12 || !(d.ALo <= d.A && d.A <= d.AHi) || d.ALo < 0 || d.AHi > 2.0/3+1e-12 {
		t.Errorf("diff %+v", d)
	}
	// RL's pass@1 is 2/3 < 1: S_rl = 0, S_base = 4/27.
	if !d.HasS || math.Abs(d.S-4.0/27) > 1e-12 {
		t.Errorf("S diff %+v", d)
	}
	again, _ := SharpeningTaxDiff(counts, rl, 4, 2000, 7)
	if again != d {
		t.Error("same seed, different interval")
	}
}

// TestSharpeningTaxDiffManyProblems: 20,000 problems take the multinomial
// resamples; the A interval matches the normal one from the per-problem
// differences' standard error (±15 %), as a paired bootstrap of a mean must.
func TestSharpeningTaxDiffManyProblems(t *testing.T) {
	const probs, n = 20000, 4
	base, rl := make([]passk.Count, probs), make([]passk.Count, probs)
	for i := range probs {
		base[i] = passk.Count{N: n, C: (i * 7) % (n + 1)}
		rl[i] = passk.Count{N: n, C: (i*3 + i/5) % (n + 1)}
	}
	d, err := SharpeningTaxDiff(base, rl, n, 2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	ab, _, cb, _ := taxRows(base, n)
	ao, _, co, _ := taxRows(rl, n)
	var s, sq float64
	for i := range cb {
		x := ab[cb[i]] - ao[co[i]]
		s += x
		sq += x * x
	}
	mu := s / probs
	se := math.Sqrt((sq/probs - mu*mu) / probs)
	if math.Abs(d.A-mu) > 1e-12 {
		t.Fatalf("A diff %v, want %v", d.A, mu)
	}
	if w, want := d.AHi-d.ALo, 2*1.96*se; math.Abs(w-want) > 0.15*want {
		t.Errorf("interval width %.5f, want %.5f (normal)", w, want)
	}
	if !(d.ALo < mu && mu < d.AHi) {
		t.Errorf("interval [%v, %v] misses %v", d.ALo, d.AHi, mu)
	}
}

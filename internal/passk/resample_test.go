package passk

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestResamplerMoments: the multinomial draws have the moments of resampling problems one by
// one: E w_t = f_t, Var w_t = N p_t (1 − p_t), Cov(w_s, w_t) = −N p_s p_t, and every resample
// holds exactly N problems.
func TestResamplerMoments(t *testing.T) {
	freq := []int{600, 0, 300, 99, 1}
	var typeOf []int
	for ty, f := range freq {
		for range f {
			typeOf = append(typeOf, ty)
		}
	}
	n := float64(len(typeOf))
	for _, multi := range []bool{true, false} {
		r, err := NewResampler(typeOf, len(freq))
		if err != nil {
			t.Fatal(err)
		}
		if !r.multi {
			t.Fatal("1,000 problems of 5 types: want multinomial draws")
		}
		r.multi = multi
		rng := rand.New(rand.NewPCG(1, 2))
		const draws = 40000
		w := make([]float64, len(freq))
		sum, sq := make([]float64, len(freq)), make([]float64, len(freq))
		var cross float64 // Σ w_0 w_2
		for range draws {
			r.Draw(rng, w)
			var tot float64
			for ty, x := range w {
				if x < 0 || x != math.Trunc(x) {
					t.Fatalf("multi=%v: w[%d] = %v", multi, ty, x)
				}
				tot += x
				sum[ty] += x
				sq[ty] += x * x
			}
			if tot != n {
				t.Fatalf("multi=%v: a resample of %v problems", multi, tot)
			}
			cross += w[0] * w[2]
		}
		for ty, f := range freq {
			p := float64(f) / n
			mean := sum[ty] / draws
			v := sq[ty]/draws - mean*mean
			wantV := n * p * (1 - p)
			if math.Abs(mean-float64(f)) > 4*math.Sqrt(wantV/draws)+1e-9 {
				t.Errorf("multi=%v type %d: mean %.2f, want %d", multi, ty, mean, f)
			}
			if math.Abs(v-wantV) > 0.05*wantV+1e-9 {
				t.Errorf("multi=%v type %d: variance %.2f, want %.2f", multi, ty, v, wantV)
			}
		}
		cov := cross/draws - (sum[0]/draws)*(sum[2]/draws)
		if want := -n * 0.6 * 0.3; math.Abs(cov-want) > 0.06*math.Abs(want) {
			t.Errorf("multi=%v: cov(w0, w2) = %.1f, want %.1f", multi, cov, want)
		}
	}
}

// TestBootstrapManyProblems: 40,000 problems of few distinct counts take the multinomial path
// and give the intervals of resampling problems one by one (within Monte Carlo error).
func TestBootstrapManyProblems(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const probs = 40000
	base, rl := make([]Count, probs), make([]Count, probs)
	for i := range probs {
		p := rng.Float64()
		q := min(1, 1.3*p)
		if rng.IntN(8) == 0 {
			q = 0
		}
		var cb, cr int
		for range 8 {
			if rng.Float64() < p {
				cb++
			}
			if rng.Float64() < q {
				cr++
			}
		}
		base[i], rl[i] = Count{N: 8, C: cb}, Count{N: 8, C: cr}
	}
	opt := BootstrapOptions{Draws: 1000, Seed: 3}
	fast, err := newBootstrapper([][]Count{base, rl}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !fast.types.multi {
		t.Fatalf("%d problems of %d types: want multinomial draws", probs, len(fast.typeClass))
	}
	slow, _ := newBootstrapper([][]Count{base, rl}, opt)
	slow.types.multi = false
	a, b := fast.run(), slow.run()
	for i, k := range a.Ks {
		for m := range a.Models {
			x, y := a.Models[m].Curve[i], b.Models[m].Curve[i]
			if x.Point != y.Point {
				t.Fatalf("k=%d model %d: point %v vs %v", k, m, x.Point, y.Point)
			}
			// Interval half-widths ≈ 0.003; 1,000 draws put each end within ~10% of it.
			hw := (y.Hi - y.Lo) / 2
			if math.Abs(x.Lo-y.Lo) > 0.2*hw || math.Abs(x.Hi-y.Hi) > 0.2*hw {
				t.Errorf("k=%d model %d: multinomial [%.5f, %.5f], one by one [%.5f, %.5f]", k, m, x.Lo, x.Hi, y.Lo, y.Hi)
			}
		}
	}
}

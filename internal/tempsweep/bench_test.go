package tempsweep

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/reach-lab/reach/internal/passk"
)

// A base model and an RL model at three temperatures, 500 problems × n = 1,024: the sweep's
// figures as the report build computes them (k* at the chart's ks, 1,000 draws).
func BenchmarkCompute500x1024(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const np, n = 500, 1024
	gen := func() []passk.Count {
		out := make([]passk.Count, np)
		for j := range out {
			p := r.Float64() * r.Float64()
			out[j] = passk.Count{N: n, C: int(p * n)}
		}
		return out
	}
	runs := []Run{{Name: "base", Role: "base", Identity: "b", Temperature: 0.6, HasTemp: true, Counts: gen()}}
	for _, t := range []float64{0.6, 1.0, 1.2} {
		runs = append(runs, Run{Name: fmt.Sprintf("rl@T=%v", t), Role: "rl", Identity: "r", Temperature: t, HasTemp: true, Counts: gen()})
	}
	keys := make([]string, np)
	for j := range keys {
		keys[j] = fmt.Sprint(j)
	}
	chartKs := func(kmax int) []int {
		var ks []int
		for k := 1; k <= min(kmax, 64); k++ {
			ks = append(ks, k)
		}
		for k := 72; k < kmax; k = k * 9 / 8 {
			ks = append(ks, k)
		}
		return append(ks, kmax)
	}
	for b.Loop() {
		if _, err := Compute(runs, keys, Options{ChartKs: chartKs, Draws: 1000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// G-Pass@k's intervals of one model, 500 problems × n = 1,024, at the report's ks.
func BenchmarkGPassBootstrap500x1024(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	counts := make([]passk.Count, 500)
	for j := range counts {
		counts[j] = passk.Count{N: 1024, C: r.IntN(1025)}
	}
	ks := []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}
	for b.Loop() {
		if _, err := passk.GPassBootstrap(counts, ks, []float64{0.25, 0.5, 0.75, 1}, 1000, 1, 0.95); err != nil {
			b.Fatal(err)
		}
	}
}

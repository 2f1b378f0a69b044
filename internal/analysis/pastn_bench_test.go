package analysis

import (
	"testing"

	"github.com/reach-lab/reach/internal/passk"
)

// BenchmarkCompute2x12500x80 builds the report of two models on 12,500 problems at n = 80
// (a million samples per model pair... two million counts of samples): the curves continued
// past n and the priors they need are part of it.
func BenchmarkCompute2x12500x80(b *testing.B) {
	c, ps, counts, _ := statsBenchData(2, 12500, 80)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Compute(c, ps, counts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPastN2x12500x80 is the continuation past n alone, on the data of
// BenchmarkCompute2x12500x80.
func BenchmarkPastN2x12500x80(b *testing.B) {
	c, ps, counts, _ := statsBenchData(2, 12500, 80)
	rep, err := Compute(c, ps, counts)
	if err != nil {
		b.Fatal(err)
	}
	models := make([][]passk.Count, len(rep.Models))
	for m, mr := range rep.Models {
		for _, x := range mr.Counts.All() {
			models[m] = append(models[m], passk.Count{N: x.N, C: x.C})
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if err := rep.pastNFigures(models); err != nil {
			b.Fatal(err)
		}
	}
}

package main

import (
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/analysis"
)

// reach report --biased prints the biased estimator's figures under the
// unbiased ones (a new user found its output identical to the default).
func TestPrintBiased(t *testing.T) {
	rep := &analysis.Report{
		Models: []analysis.ModelReport{
			{Name: "base", PassAtKBiased: []analysis.Point{{K: 1, Value: 0.25}, {K: 2, Value: 0.4375}}},
			{Name: "rl", PassAtKBiased: []analysis.Point{{K: 1, Value: 1.0 / 3}, {K: 2, Value: 1.0 / 3}}},
		},
		Pairs: []analysis.PairReport{{Base: "base", Other: "rl", CrossoverBiased: &analysis.Crossover{Found: true, K: 1.49, Label: "k* ≈ 1.5"}}},
	}
	var b strings.Builder
	printBiased(&b, rep)
	for _, want := range []string{"biased estimator 1 − (1 − c/n)^k", "base", "pass@2  43.75%", "pass@2  33.33%", "base vs rl: k* ≈ 1.5"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("--biased output lacks %q:\n%s", want, b.String())
		}
	}
}

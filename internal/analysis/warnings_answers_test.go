package analysis

import (
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// A lighteval file answered "ANSWER: 5" before the verifier knew that
// marker: every sample fell to the last-number rule, the strict policy
// counted none, and both models showed 0 % without a word. Most samples
// graded by a fallback (strict) or without an answer is a critical warning
// naming the count, the reason and one sample; a few are not, and the
// lenient policy, which counts fallback answers on purpose, is not.
func TestUngradedWarning(t *testing.T) {
	quality := func(policy string, fallback, none int64) map[int64]store.RunQuality {
		return map[int64]store.RunQuality{
			1: {RunID: 1, Samples: 20, FallbackGraded: fallback, NoAnswer: none, GradingPolicy: policy},
			2: {RunID: 2, Samples: 20, FallbackGraded: 1, GradingPolicy: policy},
		}
	}
	find := func(rep *Report) []Warning {
		var out []Warning
		for _, w := range rep.Warnings {
			if w.Code == "answers-not-graded" {
				out = append(out, w)
			}
		}
		return out
	}
	c, ps, counts := budgetFixture([]int{10, 10}, []int{0, 0}, []int{10, 10}, []int{5, 6})
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	rep.AttachQuality(c.Runs, quality(store.PolicyStrict, 14, 2), func(int64) string { return "" })
	rep.Models[0].UngradedExample = &UngradedSample{Problem: "test/algebra/1.json", Index: 3, Rule: "last-number", Status: "incorrect", Tail: "We add.\nANSWER: 5"}
	rep.checkWarnings()
	got := find(rep)
	if len(got) != 1 || got[0].Severity != SeverityCritical || got[0].Models[0] != "base" || rep.Warnings[0].Code != "answers-not-graded" {
		t.Fatalf("warnings %+v", rep.Warnings)
	}
	for _, want := range []string{"16 of 20 samples (80.0 %)", "14 had an answer only a fallback rule found", "2 no answer",
		`problem test/algebra/1.json, sample 3 (answer found by rule last-number) ends "We add.\nANSWER: 5"`} {
		if !strings.Contains(got[0].Text, want) {
			t.Errorf("text %q lacks %q", got[0].Text, want)
		}
	}
	// Half is not most.
	rep.AttachQuality(c.Runs, quality(store.PolicyStrict, 8, 2), func(int64) string { return "" })
	if w := find(rep); len(w) != 0 {
		t.Errorf("10 of 20 flagged: %+v", w)
	}
	// The lenient policy counts fallback answers: only the unreadable ones count.
	rep.AttachQuality(c.Runs, quality(store.PolicyLenient, 14, 2), func(int64) string { return "" })
	if w := find(rep); len(w) != 0 {
		t.Errorf("lenient policy flagged: %+v", w)
	}
	rep.AttachQuality(c.Runs, quality(store.PolicyLenient, 0, 15), func(int64) string { return "" })
	if w := find(rep); len(w) != 1 || !strings.Contains(w[0].Text, "15 of 20 samples") || !strings.Contains(w[0].Text, "could read no answer") {
		t.Errorf("15 unreadable of 20, lenient: %+v", w)
	}
	// Counts-only runs (no quality figures) are never flagged.
	if rep, err = Compute(c, ps, counts); err != nil {
		t.Fatal(err)
	}
	rep.AttachQuality(c.Runs, nil, func(int64) string { return "" })
	if w := find(rep); len(w) != 0 {
		t.Errorf("counts only flagged: %+v", w)
	}
}

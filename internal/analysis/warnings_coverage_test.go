package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// A samples file covering 1 of 4 dataset problems: every figure describes
// a quarter of the dataset, which the page must say.
func TestFewProblemsWarning(t *testing.T) {
	c, ps, counts := budgetFixture([]int{8, 8, 8, 8}, []int{1, 2, 3, 4}, []int{8, 8, 8, 8}, []int{2, 2, 2, 2})
	counts[2] = counts[2][:1]
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Problems != 1 || rep.Dropped != 3 || !slices.Contains(codes(rep.Warnings), "few-problems") {
		t.Fatalf("problems %d, dropped %d, warnings %v", rep.Problems, rep.Dropped, codes(rep.Warnings))
	}
	if w := rep.Warnings[0]; w.Severity != SeverityWarning || !strings.Contains(w.Text, "Only 1 of the dataset's 4 problems") {
		t.Errorf("first warning %+v", w)
	}
	// Half the dataset is not "few".
	c, ps, counts = budgetFixture([]int{8, 8, 8, 8}, []int{1, 2, 3, 4}, []int{8, 8, 8, 8}, []int{2, 2, 2, 2})
	counts[2] = counts[2][:2]
	if rep, _ := Compute(c, ps, counts); slices.Contains(codes(rep.Warnings), "few-problems") {
		t.Errorf("2 of 4 problems flagged: %v", codes(rep.Warnings))
	}
	// Sampled with --limit 1: the subset was chosen, nothing to warn of.
	c, ps, counts = budgetFixture([]int{8, 8, 8, 8}, []int{1, 2, 3, 4}, []int{8, 8, 8, 8}, []int{2, 2, 2, 2})
	counts[1], counts[2] = counts[1][:1], counts[2][:1]
	c.Sampling = []byte(`{"n": 8, "limit": 1}`)
	if rep, _ := Compute(c, ps, counts); rep.SampledLimit != 1 || slices.Contains(codes(rep.Warnings), "few-problems") {
		t.Errorf("sampled with a limit of 1: limit %d, warnings %v", rep.SampledLimit, codes(rep.Warnings))
	}
}

// n = 1: no curve, no crossover.
func TestOneSampleWarning(t *testing.T) {
	c, ps, counts := budgetFixture([]int{1, 1, 1}, []int{1, 0, 1}, []int{1, 1, 1}, []int{1, 1, 0})
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.KMax != 1 || !slices.Contains(codes(rep.Warnings), "one-sample") {
		t.Errorf("k max %d, warnings %v", rep.KMax, codes(rep.Warnings))
	}
	if w := rep.Warnings[slices.Index(codes(rep.Warnings), "one-sample")]; !strings.HasPrefix(w.Text, "Every problem has one sample per model") {
		t.Errorf("all at n = 1: %q", w.Text)
	}
	c, ps, counts = budgetFixture([]int{2, 2}, []int{1, 0}, []int{2, 2}, []int{1, 1})
	if rep, _ := Compute(c, ps, counts); slices.Contains(codes(rep.Warnings), "one-sample") {
		t.Errorf("n = 2 flagged: %v", codes(rep.Warnings))
	}
	// The base model at n = 8, the other at 1: the warning names the other
	// (it said "every problem has one sample per model", untrue of the base).
	c, ps, counts = budgetFixture([]int{8, 8}, []int{3, 0}, []int{1, 1}, []int{1, 0})
	rep, err = Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(codes(rep.Warnings), "one-sample")
	if i < 0 {
		t.Fatalf("n = 8 and 1: warnings %v", codes(rep.Warnings))
	}
	if w := rep.Warnings[i].Text; !strings.HasPrefix(w, rep.Models[1].Name+" has one sample on some problems, so k max = 1") || !strings.Contains(w, "on a problem: 8)") {
		t.Errorf("n = 8 and 1: %q", w)
	}
}

// Re-verifying the released HumanEval files with the wrong harness turned
// 32 % into 0 %: Reach's verdicts then differ from the file's labels on a
// third of the samples, and the page says so by model. A few differences
// (a verifier fixing a grader's label errors) are not flagged.
func TestVerdictsDifferWarning(t *testing.T) {
	c, ps, counts := budgetFixture([]int{10, 10}, []int{3, 4}, []int{10, 10}, []int{5, 6})
	many, few := int64(7), int64(1)
	c.Runs[0].VerdictsChanged, c.Runs[1].VerdictsChanged = &many, &few
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	rep.AttachQuality(c.Runs, map[int64]store.RunQuality{1: {RunID: 1, Samples: 20}, 2: {RunID: 2, Samples: 20}}, func(int64) string { return "" })
	var got []Warning
	for _, w := range rep.Warnings {
		if w.Code == "verdicts-differ-from-file" {
			got = append(got, w)
		}
	}
	if len(got) != 1 || got[0].Models[0] != "base" || !strings.Contains(got[0].Text, "on 7 of 20 samples (35.0 %)") {
		t.Errorf("warnings %+v", got)
	}
}

// A model without one correct sample: the page says so, critically (a new
// user imported AIME samples against HumanEval and read 0 % without a word).
func TestNothingSolvedWarning(t *testing.T) {
	c, ps, counts := budgetFixture([]int{4, 4}, []int{1, 0}, []int{4, 4}, []int{0, 0})
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(codes(rep.Warnings), "nothing-solved")
	if i < 0 {
		t.Fatalf("warnings %v", codes(rep.Warnings))
	}
	if w := rep.Warnings[i]; w.Severity != SeverityCritical || !slices.Equal(w.Models, []string{"rl"}) ||
		!strings.HasPrefix(w.Text, "rl has no correct sample on any of the 2 problems (8 samples)") {
		t.Errorf("warning %+v", w)
	}
	c, ps, counts = budgetFixture([]int{4, 4}, []int{1, 0}, []int{4, 4}, []int{0, 1})
	if rep, _ := Compute(c, ps, counts); slices.Contains(codes(rep.Warnings), "nothing-solved") {
		t.Errorf("a model with one correct sample flagged: %v", codes(rep.Warnings))
	}
}

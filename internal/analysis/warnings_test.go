package analysis

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// budgetFixture: problems 0..np-1; base has nb[i] samples on problem i with
// cb[i] correct, the RL model no[i] with co[i].
func budgetFixture(nb, cb, no, co []int) (store.Comparison, []store.Problem, map[int64][]store.Count) {
	c := store.Comparison{ID: 3, Name: "budgets", Status: store.StatusReady, Runs: []store.Run{
		{ID: 1, ModelName: "base", Role: "base"}, {ID: 2, ModelName: "rl", Role: "rl"}}}
	var ps []store.Problem
	counts := map[int64][]store.Count{}
	for i := range nb {
		pid := int64(100 + i)
		ps = append(ps, store.Problem{ID: pid, Key: string(rune('a' + i)), Idx: i, Reference: `\frac{7}{3}`})
		counts[1] = append(counts[1], store.Count{RunID: 1, ProblemID: pid, N: nb[i], C: cb[i]})
		counts[2] = append(counts[2], store.Count{RunID: 2, ProblemID: pid, N: no[i], C: co[i]})
	}
	return c, ps, counts
}

func codes(ws []Warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Code)
	}
	return out
}

func TestNoWarningsOnEqualBudgets(t *testing.T) {
	c, ps, counts := fixture()
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 0 || !rep.Budget.Equal {
		t.Errorf("warnings %v, budget %+v", codes(rep.Warnings), rep.Budget)
	}
	b, _ := json.Marshal(rep)
	if !strings.Contains(string(b), `"warnings":[]`) {
		t.Error("report JSON lacks an empty warnings list")
	}
}

// Issue 9 case 10: ten problems at n = 128 and one at n = 16 cut k max
// to 16 for every curve; the page offers leaving it out.
func TestKMaxCutByAFewShortProblems(t *testing.T) {
	nb := []int{128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 16}
	cb := []int{1, 5, 0, 128, 64, 2, 0, 9, 100, 3, 1}
	c, ps, counts := budgetFixture(nb, cb, nb, []int{30, 40, 0, 128, 120, 0, 0, 60, 128, 0, 8})
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.KMax != 16 || rep.Budget.SuggestMinN != 128 || rep.Budget.ShortProblems != 1 || rep.Budget.Equal {
		t.Fatalf("k max %d, budget %+v", rep.KMax, rep.Budget)
	}
	if got := codes(rep.Warnings); len(got) != 1 || got[0] != "k-max-cut" {
		t.Fatalf("warnings %v", got)
	}
	w := rep.Warnings[0]
	if w.Action == nil || w.Action.Param != "min_n" || w.Action.Value != "128" || w.Severity != SeverityWarning ||
		!strings.Contains(w.Text, "k max is 16 because 1 problem has fewer samples than the other 10") ||
		!strings.Contains(w.Text, "Leaving it out compares up to k = 128.") {
		t.Errorf("warning %+v (action %+v)", w, w.Action)
	}
	// Same budgets for both models on every problem: no solved-set warning.
	if rep.Pairs[0].EqualBudget != nil {
		t.Errorf("equal budget %+v on equal per-problem budgets", rep.Pairs[0].EqualBudget)
	}

	// Leaving it out: k max 128, a note that says so and how to undo it.
	rep, err = ComputeWith(c, ps, counts, Options{MinN: 128})
	if err != nil {
		t.Fatal(err)
	}
	if rep.KMax != 128 || rep.Problems != 10 || rep.ShortLeftOut != 1 || rep.KMaxAll != 16 || rep.Variant != "all+min_n=128" {
		t.Fatalf("k max %d, problems %d, left out %d, variant %q", rep.KMax, rep.Problems, rep.ShortLeftOut, rep.Variant)
	}
	if got := codes(rep.Warnings); len(got) != 1 || got[0] != "short-problems-left-out" || rep.Warnings[0].Action.Value != "" {
		t.Errorf("warnings %v", got)
	}
	all, _ := Compute(c, ps, counts)
	if all.Hash() == rep.Hash() {
		t.Error("the min_n variant shares the statistics hash of the full one")
	}
}

// Many short problems are not "a few": no offer to leave them out.
func TestKMaxNotCutByManyShortProblems(t *testing.T) {
	nb := []int{128, 128, 16, 16, 16}
	c, ps, counts := budgetFixture(nb, []int{1, 2, 3, 4, 5}, nb, []int{1, 2, 3, 4, 5})
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Budget.SuggestMinN != 0 || len(rep.Warnings) != 0 {
		t.Errorf("budget %+v, warnings %v", rep.Budget, codes(rep.Warnings))
	}
}

// Issue 9 case 10: the base model with n = 8 against an RL model with
// n = 2. Solved sets at unequal budgets are flagged, with the expected
// counts at equal budgets.
func TestUnequalBudgetsFlagged(t *testing.T) {
	c, ps, counts := budgetFixture([]int{8, 8, 8, 8}, []int{1, 0, 4, 8}, []int{2, 2, 2, 2}, []int{0, 0, 1, 2})
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Pairs[0]
	if p.Solved.BaseOnly != 1 || p.EqualBudget == nil || p.EqualBudget.BaseMore != 4 || p.EqualBudget.OtherMore != 0 {
		t.Fatalf("solved %+v, equal budget %+v", p.Solved, p.EqualBudget)
	}
	// Problem a: base 1/8 at m = 2 solves with pass@2 = 1 − C(7,2)/C(8,2) = 1/4 (RL 0/2):
	// expected base-only 1/4 where the plain sets say 1. Problem c: base 4/8 at m = 2 solves with
	// 1 − C(4,2)/C(8,2) = 1 − 6/28 = 11/14, RL solved (1/2): both 11/14, RL-only 3/14.
	eb := p.EqualBudget
	if math.Abs(eb.BaseOnly-0.25) > 1e-12 || math.Abs(eb.Both-(11.0/14+1)) > 1e-12 || math.Abs(eb.OtherOnly-3.0/14) > 1e-12 {
		t.Errorf("equal budget %+v", eb)
	}
	if got := codes(rep.Warnings); len(got) != 1 || got[0] != "unequal-budgets" {
		t.Fatalf("warnings %v", got)
	}
	if w := rep.Warnings[0]; !strings.Contains(w.Text, "favour base") || !strings.Contains(w.Text, "base-only 0.2") || w.Figures[0] != FigureSolved {
		t.Errorf("warning %q", w.Text)
	}
}

func TestWarningsSortedBySeverity(t *testing.T) {
	defer func(saved []Check) { checks = saved }(checks)
	checks = []Check{
		func(*Report) []Warning { return []Warning{{Code: "a", Severity: SeverityInfo}} },
		func(*Report) []Warning { return []Warning{{Code: "b", Severity: SeverityCritical}} },
		func(*Report) []Warning {
			return []Warning{{Code: "c", Severity: SeverityWarning}, {Code: "d", Severity: SeverityCritical}}
		},
	}
	rep := &Report{}
	rep.checkWarnings()
	if got := strings.Join(codes(rep.Warnings), ""); got != "bdca" {
		t.Errorf("order %q, want bdca", got)
	}
}

func TestAttachQuality(t *testing.T) {
	c, ps, counts := fixture()
	c.Runs[0].VerdictSource, c.Runs[1].VerdictSource, c.Runs[2].VerdictSource = "file", "reach-math/1", "reach-math/1"
	c.GradingPolicy = "lenient"
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Models[1].GradingPolicy != "lenient" || rep.Models[0].GradingPolicy != "file" || rep.Models[1].Truncated != nil {
		t.Fatalf("before: %+v", rep.Models[1].Quality)
	}
	three := int64(3)
	qs := map[int64]store.RunQuality{2: {RunID: 2, Samples: 20, Truncated: &three, FallbackGraded: 2, NoAnswer: 1, DistinctMin: 2,
		DistinctMinN: 4, DistinctMinProblem: 12, RepeatedProblems: 1, GradingPolicy: "strict"}}
	rep.AttachQuality(c.Runs, qs, func(id int64) string { return map[int64]string{12: "c"}[id] })
	q := rep.Models[1].Quality
	if q.GradingPolicy != "strict" || *q.Truncated != 3 || *q.FallbackGraded != 2 || *q.NoAnswer != 1 || *q.DistinctTexts != 2 ||
		q.DistinctTextsProblem != "c" || *q.RepeatedTextProblems != 1 || rep.Models[0].Truncated != nil {
		t.Errorf("quality %+v", q)
	}
	b, _ := json.Marshal(rep.Models[0])
	for _, f := range []string{`"grading_policy":"file"`, `"truncated":null`, `"fallback_graded":null`, `"no_answer":null`, `"distinct_texts":null`} {
		if !strings.Contains(string(b), f) {
			t.Errorf("counts-only model JSON lacks %s", f)
		}
	}
}

// Issue 9 case 2: a model whose samples repeat on nearly every problem
// (a seed reused per chunk: 16 distinct texts of 32) is flagged by name
// with the worst problem; the HumanEval example's share of repeats at
// T = 0.2 (82 of 164) and figures stored before the check (nil) are not.
func TestDuplicatedSamplesWarning(t *testing.T) {
	c, ps, counts := budgetFixture([]int{32, 32, 32}, []int{3, 0, 9}, []int{32, 32, 32}, []int{20, 1, 30})
	ip := func(v int) *int { return &v }
	cases := []struct {
		name     string
		rl       store.RunQuality
		want     bool
		wantText string
	}{
		{"seed reused per chunk", store.RunQuality{RunID: 2, DupChecked: ip(3), DupProblems: ip(3), DupWorstProblem: 101, DupWorstN: 32, DupWorstDistinct: 16}, true,
			"rl: problem b has 32 samples but only 16 distinct texts, and 3 of its 3 problems with n ≥ 8 have at most half as many distinct texts as samples; " +
				"duplicated samples inflate pass@k confidence and can mean the sampler reused a seed (or sampled at temperature 0)."},
		{"at the threshold (80 %)", store.RunQuality{RunID: 2, DupChecked: ip(10), DupProblems: ip(8), DupWorstProblem: 100, DupWorstN: 32, DupWorstDistinct: 1}, true,
			"rl: problem a has 32 samples but only 1 distinct text, and 8 of its 10"},
		{"HumanEval at T = 0.2: half the problems", store.RunQuality{RunID: 2, DupChecked: ip(164), DupProblems: ip(82), DupWorstProblem: 100, DupWorstN: 10, DupWorstDistinct: 1}, false, ""},
		{"just under the threshold", store.RunQuality{RunID: 2, DupChecked: ip(10), DupProblems: ip(7), DupWorstProblem: 100, DupWorstN: 32, DupWorstDistinct: 1}, false, ""},
		{"no duplicates", store.RunQuality{RunID: 2, DupChecked: ip(3), DupProblems: ip(0)}, false, ""},
		{"short answers only: nothing checked", store.RunQuality{RunID: 2, DupChecked: ip(0), DupProblems: ip(0)}, false, ""},
		{"figures from before the check", store.RunQuality{RunID: 2}, false, ""},
	}
	keys := map[int64]string{100: "a", 101: "b", 102: "c"}
	for _, tc := range cases {
		rep, err := Compute(c, ps, counts)
		if err != nil {
			t.Fatal(err)
		}
		rep.AttachQuality(c.Runs, map[int64]store.RunQuality{2: tc.rl}, func(id int64) string { return keys[id] })
		var got *Warning
		for i, w := range rep.Warnings {
			if w.Code == "duplicated-samples" {
				got = &rep.Warnings[i]
			}
		}
		if (got != nil) != tc.want {
			t.Errorf("%s: warnings %v", tc.name, codes(rep.Warnings))
			continue
		}
		if got == nil {
			continue
		}
		if !strings.HasPrefix(got.Text, tc.wantText) || got.Severity != SeverityCritical || len(got.Models) != 1 || got.Models[0] != "rl" {
			t.Errorf("%s: warning %+v", tc.name, *got)
		}
		if ex := rep.Models[1].DuplicatedExample; ex == nil || ex.N != tc.rl.DupWorstN || ex.Distinct != tc.rl.DupWorstDistinct {
			t.Errorf("%s: duplicated example %+v", tc.name, ex)
		}
	}
}

// A model whose file labels some samples only (the rest graded by the
// verifier) is named in a warning; file-only and verifier-only models are
// not.
func TestMixedVerdictsWarning(t *testing.T) {
	c, ps, counts := fixture()
	c.Runs[0].VerdictSource, c.Runs[1].VerdictSource, c.Runs[2].VerdictSource = "file", "file+verifier", "verifier"
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	var got []Warning
	for _, w := range rep.Warnings {
		if w.Code == "mixed-verdicts" {
			got = append(got, w)
		}
	}
	if len(got) != 1 || got[0].Models[0] != c.Runs[1].ModelName || !strings.Contains(got[0].Text, "two graders") {
		t.Errorf("mixed-verdicts warnings: %+v", got)
	}
}

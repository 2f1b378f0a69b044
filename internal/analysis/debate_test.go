package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// pairFixture: 3 problems, base and RL with texts, n = 4 each.
func pairFixture(t *testing.T, base, rl []int) (*Report, store.Comparison) {
	t.Helper()
	c := store.Comparison{ID: 9, Name: "pair", Status: store.StatusReady, Runs: []store.Run{
		{ID: 1, ModelName: "base", Role: "base", HasTexts: true},
		{ID: 2, ModelName: "rl", Role: "rl", HasTexts: true},
	}}
	ps := []store.Problem{{ID: 10, Key: "p0", Reference: "1234"}, {ID: 11, Key: "p1", Reference: "5678"}, {ID: 12, Key: "p2", Reference: "91011"}}
	cnt := func(run int64, cs []int) []store.Count {
		var out []store.Count
		for i, c := range cs {
			out = append(out, store.Count{RunID: run, ProblemID: int64(10 + i), N: 4, C: c})
		}
		return out
	}
	rep, err := ComputeWith(c, ps, map[int64][]store.Count{1: cnt(1, base), 2: cnt(2, rl)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep, c
}

func TestCoTReportByHand(t *testing.T) {
	rep, c := pairFixture(t, []int{4, 2, 1}, []int{4, 4, 0})
	// Window 4. Base: p0 4 correct, 2 valid; p1 2 correct, 1 valid + 1 unsure; p2 1 correct, 1 valid.
	// RL: p0 4 correct, 4 valid; p1 4 correct, 1 valid, 3 flawed; p2 none correct.
	counts := map[int64][]store.CoTCount{
		1: {{RunID: 1, ProblemID: 10, N: 4, Correct: 4, Valid: 2, Flawed: 2},
			{RunID: 1, ProblemID: 11, N: 4, Correct: 2, Valid: 1, Unsure: 1},
			{RunID: 1, ProblemID: 12, N: 4, Correct: 1, Valid: 1, Human: 1}},
		2: {{RunID: 2, ProblemID: 10, N: 4, Correct: 4, Valid: 4},
			{RunID: 2, ProblemID: 11, N: 4, Correct: 4, Valid: 1, Flawed: 3},
			{RunID: 2, ProblemID: 12, N: 4}},
	}
	cot, err := cotReport(rep, c.Runs, counts, 4)
	if err != nil {
		t.Fatal(err)
	}
	if cot.Status != DebateComplete || cot.Problems != 3 || cot.LeftOut != 0 || cot.KMax != 4 {
		t.Fatalf("status %s problems %d left out %d kmax %d", cot.Status, cot.Problems, cot.LeftOut, cot.KMax)
	}
	// CoT-pass@1: base (2/4 + 1/4 + 1/4)/3 = 1/3; RL (4/4 + 1/4 + 0)/3 = 5/12.
	// CoT-pass@4: base 1, 1, 1 -> 1; RL 1, 1, 0 -> 2/3. Base ahead at k = 4: a crossover.
	b, r := cot.Models[0], cot.Models[1]
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-12 }
	if !near(b.CoTPassAtK[0].Value, 1.0/3) || !near(r.CoTPassAtK[0].Value, 5.0/12) || !near(b.CoTPassAtK[3].Value, 1) || !near(r.CoTPassAtK[3].Value, 2.0/3) {
		t.Errorf("CoT-pass@1 %v %v, @4 %v %v", b.CoTPassAtK[0], r.CoTPassAtK[0], b.CoTPassAtK[3], r.CoTPassAtK[3])
	}
	// Answer-only pass@1 on the same window: base 7/12, RL 8/12.
	if !near(b.PassAtK[0].Value, 7.0/12) || !near(r.PassAtK[0].Value, 8.0/12) {
		t.Errorf("pass@1 %v %v", b.PassAtK[0], r.PassAtK[0])
	}
	if b.Correct != 7 || b.Valid != 4 || b.Unsure != 1 || b.Human != 1 || r.Flawed != 3 {
		t.Errorf("base %+v rl %+v", b, r)
	}
	if len(cot.Pairs) != 1 || !cot.Pairs[0].Crossover.Found || cot.Pairs[0].CrossoverCI == nil {
		t.Errorf("pair %+v", cot.Pairs)
	}
	rep.CoT = cot
	rep.checkWarnings()
	if !hasWarning(rep, "cot-unsure", "unsure about 1 of base's 7") {
		t.Errorf("warnings %+v", rep.Warnings)
	}
	if len(b.CoTPassAtKCI) != 4 || b.CoTPassAtKCI[0].Lo > b.CoTPassAtK[0].Value || b.CoTPassAtKCI[0].Hi < b.CoTPassAtK[0].Value {
		t.Errorf("bands %+v", b.CoTPassAtKCI)
	}

	// A pending sample on p1 of RL leaves p1 out for both models, never mixed in.
	counts[2][1].Pending, counts[2][1].Valid = 1, 0
	cot, err = cotReport(rep, c.Runs, counts, 4)
	if err != nil {
		t.Fatal(err)
	}
	if cot.Status != DebatePartial || cot.Problems != 2 || !slices.Equal(cot.LeftOutIDs, []string{"p1"}) {
		t.Fatalf("partial: status %s problems %d left out %v", cot.Status, cot.Problems, cot.LeftOutIDs)
	}
	// Base CoT-pass@1 over p0, p2: (2/4 + 1/4)/2 = 3/8.
	if !near(cot.Models[0].CoTPassAtK[0].Value, 3.0/8) || cot.Models[1].Pending != 1 {
		t.Errorf("partial base CoT-pass@1 %v, RL pending %d", cot.Models[0].CoTPassAtK[0], cot.Models[1].Pending)
	}
	rep.CoT = cot
	rep.checkWarnings()
	if !hasWarning(rep, "cot-partial", "covers 2 of 3 problems: on 1 problem some answer-correct samples have no reasoning verdict yet (1 sample)") {
		t.Errorf("warnings %+v", rep.Warnings)
	}
}

// A judge saved but not started: no answer-correct sample has a verdict,
// so only the problems nothing solved would "enter". No curve is drawn and
// no warning names a coverage (a new user saw "CoT-pass@k covers 6 of 30
// problems" and curves over the 6 problems no sample solved).
func TestCoTReportNothingJudged(t *testing.T) {
	rep, c := pairFixture(t, []int{4, 2, 0}, []int{4, 4, 0})
	counts := map[int64][]store.CoTCount{
		1: {{RunID: 1, ProblemID: 10, N: 4, Correct: 4, Pending: 4},
			{RunID: 1, ProblemID: 11, N: 4, Correct: 2, Pending: 2},
			{RunID: 1, ProblemID: 12, N: 4}},
		2: {{RunID: 2, ProblemID: 10, N: 4, Correct: 4, Pending: 4},
			{RunID: 2, ProblemID: 11, N: 4, Correct: 4, Pending: 4},
			{RunID: 2, ProblemID: 12, N: 4}},
	}
	cot, err := cotReport(rep, c.Runs, counts, 4)
	if err != nil {
		t.Fatal(err)
	}
	if cot.Status != DebatePartial || cot.Problems != 0 || len(cot.Pairs) != 0 || len(cot.Models[0].CoTPassAtK) != 0 {
		t.Fatalf("nothing judged: status %s, %d problems, %d pairs, %d curve points", cot.Status, cot.Problems, len(cot.Pairs), len(cot.Models[0].CoTPassAtK))
	}
	rep.CoT = cot
	rep.checkWarnings()
	if hasWarning(rep, "cot-partial", "") {
		t.Errorf("a warning on a figure that is not drawn: %+v", rep.Warnings)
	}
	// One verdict anywhere: p2, which nothing solved, enters with it.
	counts[1][0].Pending, counts[1][0].Valid, counts[1][0].Flawed = 0, 3, 1
	counts[2][0].Pending, counts[2][0].Valid = 0, 4
	if cot, err = cotReport(rep, c.Runs, counts, 4); err != nil {
		t.Fatal(err)
	}
	if cot.Problems != 2 || !slices.Equal(cot.LeftOutIDs, []string{"p1"}) {
		t.Errorf("judging begun: %d problems, left out %v", cot.Problems, cot.LeftOutIDs)
	}
}

// A scoring endpoint saved, nothing scored: no perplexity figure, no
// warning; once one sample is scored, its figure is partial and says so.
func TestPerplexityPartialWarning(t *testing.T) {
	rep, _ := pairFixture(t, []int{4, 2, 0}, []int{4, 4, 0})
	rep.Perplexity = &PerplexityReport{Status: DebatePartial, Note: "24 samples of the window are not scored yet",
		Models: []PerplexityModel{{Name: "base"}, {Name: "rl"}}}
	rep.checkWarnings()
	if hasWarning(rep, "perplexity-partial", "") {
		t.Errorf("warning without a figure: %+v", rep.Warnings)
	}
	rep.Perplexity.Models[0].Correct = &PerplexityStats{N: 1, Min: 1.5, Q1: 1.5, Median: 1.5, Q3: 1.5, Max: 1.5, Mean: 1.5}
	rep.checkWarnings()
	if !hasWarning(rep, "perplexity-partial", "not scored yet") {
		t.Errorf("no warning on a partial figure: %+v", rep.Warnings)
	}
}

func hasWarning(rep *Report, code, text string) bool {
	for _, w := range rep.Warnings {
		if w.Code == code && strings.Contains(w.Text, text) {
			return true
		}
	}
	return false
}

func TestJudgeAgreementKappa(t *testing.T) {
	// Judge valid/flawed/unsure by human valid/flawed: 20 5 / 10 15 / 3 1.
	a := agreement(store.Agreement{Table: [3][2]int{{20, 5}, {10, 15}, {3, 1}}})
	if a.Samples != 54 || a.Agree != 35 || a.Kappa == nil || math.Abs(*a.Kappa-0.4) > 1e-12 {
		t.Errorf("agreement %+v (kappa %v), want 54 samples, 35 agree, κ 0.4 over the 50 valid/flawed", a, a.Kappa)
	}
	if agreement(store.Agreement{}) != nil {
		t.Error("no labels: agreement should be nil")
	}
}

func TestSupportReportWithFisher(t *testing.T) {
	rep, _ := pairFixture(t, []int{4, 1, 0}, []int{4, 0, 3})
	s := rep.Support
	if s == nil || s.Eps != 0 || len(s.Pairs) != 1 {
		t.Fatalf("support %+v", s)
	}
	p := s.Pairs[0]
	if p.Preserved != 1 || p.Shrunk != 1 || p.Expanded != 1 || p.Outside != 0 || *p.Retention != 0.5 || *p.Discovery != 0.5 {
		t.Errorf("pair %+v", p)
	}
	// 1/4 vs 0/4 is no evidence (Fisher p = 1); 0/4 vs 3/4 gives p = 8/56 = 1/7.
	if !p.ShrunkTests[0].CouldBeLuck || p.ShrunkTests[0].P != 1 || math.Abs(p.ExpandedTests[0].P-1.0/7) > 1e-12 {
		t.Errorf("tests %+v %+v", p.ShrunkTests, p.ExpandedTests)
	}
	c := store.Comparison{ID: 9, Status: store.StatusReady, Runs: []store.Run{{ID: 1, ModelName: "b", Role: "base"}, {ID: 2, ModelName: "r", Role: "rl"}}}
	ps := []store.Problem{{ID: 10, Key: "p0"}, {ID: 11, Key: "p1"}}
	counts := map[int64][]store.Count{1: {{RunID: 1, ProblemID: 10, N: 4, C: 1}, {RunID: 1, ProblemID: 11, N: 4, C: 2}},
		2: {{RunID: 2, ProblemID: 10, N: 4, C: 2}, {RunID: 2, ProblemID: 11, N: 4, C: 0}}}
	r2, err := ComputeWith(c, ps, counts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// ε = 0.5: p0 base 1/4 out, RL 2/4 in -> expanded; p1 base 2/4 in, RL out -> shrunk.
	s2, err := r2.SupportAt(0.5)
	if err != nil {
		t.Fatal(err)
	}
	if q := s2.Pairs[0]; q.Expanded != 1 || q.Shrunk != 1 || q.Preserved != 0 || q.Retention == nil || *q.Retention != 0 {
		t.Errorf("ε = 0.5: %+v", q)
	}
	if r2.Support.Eps != 0 || r2.Support.Pairs[0].Preserved != 1 || r2.Support.Pairs[0].Shrunk != 1 {
		t.Errorf("SupportAt changed the report: %+v", r2.Support)
	}
	s3, _ := r2.SupportAt(0.1)
	r3 := *r2
	r3.Support = s3
	r3.checkWarnings()
	if !hasWarning(&r3, "support-eps-below-resolution", "ε = 0.1 is below 1/n") {
		t.Errorf("warnings %+v", r3.Warnings)
	}
}

func TestAnswerClassesAndDiversity(t *testing.T) {
	eq := func(a, b string) bool {
		a, b = strings.ReplaceAll(a, " ", ""), strings.ReplaceAll(b, " ", "")
		return (a == "1/2" && b == "0.5") || (a == "0.5" && b == "1/2")
	}
	as := []store.Answer{
		{Correct: true, Extracted: "3"}, {Correct: true, Extracted: "3.0"},
		{Extracted: "1/2"}, {Extracted: "1 / 2"}, {Extracted: "0.5"},
		{Extracted: "7"}, {Extracted: ""},
	}
	sizes, noAnswer, capped := answerClasses(as, eq)
	// Correct {2}; "1/2" and "1 / 2" share a text key (3 with "0.5" merged by equivalence); "7": 1.
	if !slices.Equal(sizes, []int{2, 3, 1}) || noAnswer != 1 || capped {
		t.Errorf("sizes %v no answer %d capped %v", sizes, noAnswer, capped)
	}
	// Programs group by text only, never by the math equivalence.
	ps := []store.Answer{{Program: "program:a", Correct: true}, {Program: "program:a"}, {Program: "program:b", Correct: true}}
	if sizes, _, _ := answerClasses(ps, func(string, string) bool { return true }); !slices.Equal(sizes, []int{2, 1}) {
		t.Errorf("program sizes %v", sizes)
	}
	// More distinct texts than the equivalence checks can compare: the
	// rarer ones are grouped by text, and that is reported.
	var many []store.Answer
	for i := range 70 { // 70·69/2 = 2,415 checks > answerclass.MaxChecks
		many = append(many, store.Answer{Extracted: fmt.Sprint(i)})
	}
	if _, _, capped := answerClasses(many, eq); !capped {
		t.Error("the equivalence cap was not reported")
	}

	rows := []ProblemRow{{ProblemID: 1, Key: "a"}, {ProblemID: 2, Key: "b"}, {ProblemID: 3, Key: "c"}}
	byProblem := map[int64][]store.Answer{
		1: as,                                 // classes 2, 3, 1 of 6 answered: H = −(1/3 log2 1/3 + 1/2 log2 1/2 + 1/6 log2 1/6) ≈ 1.459148
		2: {{Correct: true}, {Correct: true}}, // H = 0
		3: {{}, {}},                           // no answer at all
	}
	md, err := diversityOf("m", rows, byProblem, eq)
	if err != nil {
		t.Fatal(err)
	}
	h := -(math.Log2(1.0/3)/3 + math.Log2(0.5)/2 + math.Log2(1.0/6)/6)
	if md.Problems != 2 || md.Samples != 11 || md.NoAnswer != 3 || math.Abs(md.PerProblem[0].Entropy-h) > 1e-12 ||
		md.MeanDistinct != 2 || math.Abs(md.MeanEntropy-h/2) > 1e-12 || md.PerProblem[2].Distinct != 0 {
		t.Errorf("diversity %+v", md)
	}
	other := &ModelDiversity{Name: "rl", PerProblem: []ProblemDiversity{{ProblemID: "a", Answered: 4, Entropy: 0.5}, {ProblemID: "b", Answered: 2, Entropy: 0}}}
	dp := diversityPairs([]*ModelDiversity{md, other})
	if len(dp) != 1 || dp[0].Lower != 1 || dp[0].Equal != 1 || math.Abs(dp[0].MeanDiff-(0.5-h)/2) > 1e-12 {
		t.Errorf("pairs %+v", dp)
	}
}

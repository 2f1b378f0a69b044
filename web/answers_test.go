package web

import (
	"slices"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// The answer distribution groups spellings of one answer into one row
// (math equivalence), keeps each spelling's per-model counts, puts the
// correct class first and sums the classes past the cut into one row.
func TestGroupAnswersByEquivalence(t *testing.T) {
	runs := []store.Run{{ID: 10}, {ID: 20}}
	counts := []store.AnswerCount{
		{RunID: 10, Answer: "0.5", N: 3, Correct: 3}, {RunID: 20, Answer: `\frac{1}{2}`, N: 4, Correct: 4},
		{RunID: 20, Answer: "1/2", N: 1, Correct: 1}, {RunID: 10, Answer: "2", N: 5}, {RunID: 20, Answer: "2.0", N: 1},
		{RunID: 10, Answer: "", N: 2}, {RunID: 10, Answer: "7", N: 1}, {RunID: 20, Answer: "8", N: 1},
	}
	groups, other, _ := groupAnswers(runs, counts, 3, answerEquiv("math"))
	if len(groups) != 3 {
		t.Fatalf("%d rows; want 3", len(groups))
	}
	var spell [][]string
	for _, g := range groups {
		var s []string
		for _, m := range g.Members {
			s = append(s, m.Answer)
		}
		spell = append(spell, s)
	}
	if !slices.Equal(spell[0], []string{`\frac{1}{2}`, "0.5", "1/2"}) || !slices.Equal(groups[0].N, []int{3, 5}) || groups[0].Correct != 8 {
		t.Errorf("correct row %q N %v correct %d; want the three spellings of 1/2, [3 5], 8", spell[0], groups[0].N, groups[0].Correct)
	}
	if !slices.Equal(groups[0].Members[1].N, []int{3, 0}) {
		t.Errorf("spelling 0.5 per model %v; want [3 0]", groups[0].Members[1].N)
	}
	if !slices.Equal(spell[1], []string{"2", "2.0"}) || !slices.Equal(groups[1].N, []int{5, 1}) {
		t.Errorf("row 2 %q N %v; want 2 and 2.0, [5 1]", spell[1], groups[1].N)
	}
	if other == nil || other.Distinct != 2 || !slices.Equal(other.N, []int{1, 1}) {
		t.Errorf("other row %+v; want 7 and 8 summed, [1 1]", other)
	}
	// Code answers are grouped by text only.
	code, _, _ := groupAnswers(runs, []store.AnswerCount{{RunID: 10, Answer: "2", N: 1}, {RunID: 10, Answer: "2.0", N: 1}}, 12, answerEquiv("code"))
	if len(code) != 2 {
		t.Errorf("code answers 2 and 2.0 in %d rows; want 2", len(code))
	}
}

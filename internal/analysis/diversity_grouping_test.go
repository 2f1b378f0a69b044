package analysis

import (
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// The diversity figure names how answers were grouped: code completions are
// grouped by program text, whatever equivalence maj@k used.
func TestDiversityGroupingFollowsWhatWasGrouped(t *testing.T) {
	rows := []ProblemRow{{ProblemID: 1, Key: "p1"}}
	code := map[int64][]store.Answer{1: {{Program: "return 1"}, {Program: "return 1"}, {Program: "return 2"}}}
	math := map[int64][]store.Answer{1: {{Extracted: "3"}, {Extracted: "4"}, {Correct: true}}}
	equiv := func(a, b string) bool { return a == b }
	const mathName = "reach-math/1 answer equivalence"

	cm, err := diversityOf("code", rows, code, equiv)
	if err != nil {
		t.Fatal(err)
	}
	mm, err := diversityOf("math", rows, math, equiv)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Programs != 3 || mm.Programs != 0 {
		t.Fatalf("Programs = %d, %d; want 3, 0", cm.Programs, mm.Programs)
	}
	for _, tc := range []struct {
		ms   []*ModelDiversity
		want string
	}{
		{[]*ModelDiversity{cm, cm}, "code by program text without white space"},
		{[]*ModelDiversity{mm, nil}, mathName},
		{[]*ModelDiversity{mm, cm}, "final answers by " + mathName + ", code by program text without white space"},
	} {
		if got := diversityGrouping(tc.ms, mathName); got != tc.want {
			t.Errorf("diversityGrouping = %q, want %q", got, tc.want)
		}
	}
}

// A counts-only model leaves the diversity card with one model's answers:
// it says why instead of showing an empty card; with three models, the two
// with texts are compared and the note names the one left out.
func TestDiversityNamesCountsOnlyModels(t *testing.T) {
	rows := []ProblemRow{{ProblemID: 1, Key: "p1"}}
	m, err := diversityOf("math", rows, map[int64][]store.Answer{1: {{Extracted: "3"}, {Extracted: "4"}}}, func(a, b string) bool { return a == b })
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{Models: []ModelReport{{Name: "base counts"}, {Name: "rl"}}}
	rep.attachDiversity([]*ModelDiversity{nil, m}, "x")
	if d := rep.Diversity; d.Status != DebateUnavailable || d.Note != "only counts were imported for base counts: answer diversity compares two models' answers, and needs completion texts of both" {
		t.Errorf("one model with texts: status %q, note %q", d.Status, d.Note)
	}
	rep = &Report{Models: []ModelReport{{Name: "base"}, {Name: "rl counts"}, {Name: "rl2"}}}
	rep.attachDiversity([]*ModelDiversity{m, nil, m}, "x")
	if d := rep.Diversity; d.Status != DebateComplete || d.Note != "left out (only counts were imported): rl counts" {
		t.Errorf("two of three with texts: status %q, note %q", d.Status, d.Note)
	}
}

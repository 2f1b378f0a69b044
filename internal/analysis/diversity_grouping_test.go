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

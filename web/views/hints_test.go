package views

import (
	"testing"

	"github.com/reach-lab/reach/internal/analysis"
)

func TestWeakSolveNUsesTheComparisonsN(t *testing.T) {
	for _, tc := range []struct {
		b    analysis.Budget
		want string
	}{
		{analysis.Budget{Equal: true, NMin: 10, NMax: 10}, "10"},
		{analysis.Budget{Equal: true, NMin: 1024, NMax: 1024}, "1024"},
		{analysis.Budget{NMin: 8, NMax: 16}, "n = 8–16"},
		{analysis.Budget{}, "n"},
	} {
		if got := weakSolveN(tc.b); got != tc.want {
			t.Errorf("weakSolveN(%+v) = %q, want %q", tc.b, got, tc.want)
		}
	}
}

func TestGroupingTextNamesTheGrouping(t *testing.T) {
	if got := groupingText("code by program text without white space"); got != "code by program text without white space" {
		t.Errorf("groupingText = %q", got)
	}
	if got := groupingText(""); got != "the verifier's equivalence" {
		t.Errorf("groupingText(\"\") = %q", got)
	}
}

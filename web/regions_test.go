package web

import (
	"fmt"
	"testing"

	"github.com/reach-lab/reach/internal/analysis"
)

// problemIDs finds every problem's id by its key, and no id for a key the
// report lacks.
func TestProblemIDs(t *testing.T) {
	rep := &analysis.Report{}
	for i := range 5000 {
		rep.Rows = append(rep.Rows, analysis.ProblemRow{ProblemID: int64(10_000 + 7*i), Key: fmt.Sprintf("test/%d", (i*7919)%5000)})
	}
	id := problemIDs(&analysis.Entry{Report: rep})
	for _, r := range rep.Rows {
		if got, ok := id(r.Key); !ok || got != r.ProblemID {
			t.Fatalf("%s: %d, %v; want %d", r.Key, got, ok, r.ProblemID)
		}
	}
	for _, k := range []string{"", "test/5000", "TEST/1"} {
		if got, ok := id(k); ok {
			t.Errorf("%q: found %d", k, got)
		}
	}
}

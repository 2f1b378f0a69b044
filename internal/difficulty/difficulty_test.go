package difficulty

import (
	"bytes"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/store"
)

// A base model and two checkpoints on four problems (n = 4), by hand:
//
//	     base ck100 ck200
//	p0:  4    2     4     always / medium (kept-solved) / always (kept-solved)
//	p1:  4    0     0     always / never (lost)         / never (kept-unsolved)
//	p2:  0    1     3     never  / medium (gained)      / medium (kept-solved)
//	p3:  1    0     1     medium / never (lost)         / medium (regained)
//
// (1/4 and 3/4 are medium: hard is at most 0.2, easy above 0.8.)
func TestDifficultyRecords(t *testing.T) {
	s100, s200 := 100, 200
	c := store.Comparison{ID: 1, Name: "run", Status: store.StatusReady, Runs: []store.Run{
		{ID: 1, ModelName: "base", Role: "base"},
		{ID: 2, ModelName: "ck100", Role: "checkpoint", Step: &s100},
		{ID: 3, ModelName: "ck200", Role: "checkpoint", Step: &s200},
	}}
	var ps []store.Problem
	for i, k := range []string{"p0", "p1", "p2", "p3"} {
		ps = append(ps, store.Problem{ID: int64(10 + i), Idx: i, Key: k, Reference: "x^2+1"})
	}
	cnt := func(run int64, cs ...int) []store.Count {
		var out []store.Count
		for i, c := range cs {
			out = append(out, store.Count{RunID: run, ProblemID: int64(10 + i), N: 4, C: c})
		}
		return out
	}
	rep, err := analysis.Compute(c, ps, map[int64][]store.Count{1: cnt(1, 4, 4, 0, 1), 2: cnt(2, 2, 0, 1, 0), 3: cnt(3, 4, 0, 3, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = Records(rep, func(r Record) error {
		got = append(got, r.Problem+" "+r.Model+" "+r.Band+" "+r.Flow)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"p0 base always start", "p0 ck100 medium kept-solved", "p0 ck200 always kept-solved",
		"p1 base always start", "p1 ck100 never lost", "p1 ck200 never kept-unsolved",
		"p2 base never start", "p2 ck100 medium gained", "p2 ck200 medium kept-solved",
		"p3 base medium start", "p3 ck100 never lost", "p3 ck200 medium regained",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range []string{"csv", "jsonl", "parquet"} {
		var b bytes.Buffer
		if err := Write(&b, f, rep); err != nil || b.Len() == 0 {
			t.Errorf("%s: %d bytes, %v", f, b.Len(), err)
		}
		if f == "csv" && !strings.Contains(b.String(), "p2,2,ck100,checkpoint,100,4,1,0.25,medium,gained\n") {
			t.Errorf("csv:\n%s", b.String())
		}
	}
	if err := Write(&bytes.Buffer{}, "xlsx", rep); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestBand(t *testing.T) {
	for _, tc := range []struct {
		c, n int
		want string
	}{{0, 8, "never"}, {1, 8, "hard"}, {1, 5, "hard"}, {2, 8, "medium"}, {4, 5, "medium"}, {7, 8, "easy"}, {8, 8, "always"}} {
		if got := Band(tc.c, tc.n); got != tc.want {
			t.Errorf("Band(%d, %d) = %s, want %s", tc.c, tc.n, got, tc.want)
		}
	}
}

// Model names and problem ids come from uploaded files: in the CSV none
// may start a spreadsheet formula (the chart CSVs already quoted them).
func TestDifficultyCSVQuotesFormulas(t *testing.T) {
	c := store.Comparison{ID: 1, Name: "run", Status: store.StatusReady, Runs: []store.Run{
		{ID: 1, ModelName: "base", Role: "base"},
		{ID: 2, ModelName: `+HYPERLINK("http://evil.example";"x")`, Role: "rl"},
	}}
	ps := []store.Problem{{ID: 10, Idx: 0, Key: "=1+1", Reference: "2"}}
	rep, err := analysis.Compute(c, ps, map[int64][]store.Count{1: {{RunID: 1, ProblemID: 10, N: 4, C: 1}}, 2: {{RunID: 2, ProblemID: 10, N: 4, C: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, "csv", rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"'=1+1,0,base,", `'=1+1,0,"'+HYPERLINK(""http://evil.example"";""x"")",rl,`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("csv lacks %s:\n%s", want, b.String())
		}
	}
}

package cases_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/verify/cases"
	"github.com/reach-lab/reach/internal/verify/math"
)

func TestRunCases(t *testing.T) {
	in := strings.Join([]string{
		`{"id":"a","gold":"\\frac{1}{2}","pred":"0.5","input":"answer","equal":true,"kind":"fraction"}`,
		`{"id":"b","gold":"42","pred":"so the answer is \\boxed{41}.","input":"completion","equal":false,"kind":"integer"}`,
		`{"id":"c","gold":"$\\frac{1}{3}$","pred":"0.3333","input":"answer","equal":true,"kind":"decimal","options":{"float_rounding":4}}`,
		`{"id":"d","gold":"7","pred":"no answer here","input":"completion","equal":true,"kind":"integer"}`,
		`{"id":"e","gold":"B","pred":"I think it is B","input":"completion"}`,
	}, "\n")
	var out bytes.Buffer
	sum, err := cases.RunCases(context.Background(), strings.NewReader(in), &out, math.New())
	if err != nil {
		t.Fatal(err)
	}
	var got []cases.Result
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var r cases.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("output line %q: %v", sc.Text(), err)
		}
		got = append(got, r)
	}
	want := []struct {
		id      string
		correct bool
		status  string
	}{{"a", true, "correct"}, {"b", false, "incorrect"}, {"c", true, "correct"}, {"d", false, "unparseable"}, {"e", true, "correct"}}
	if len(got) != len(want) {
		t.Fatalf("got %d result lines, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].ID != w.id || got[i].Correct != w.correct || string(got[i].Status) != w.status {
			t.Errorf("line %d: got %+v, want %+v", i, got[i], w)
		}
	}
	if sum.Cases != 5 || sum.Expected != 4 || sum.Agree != 3 {
		t.Errorf("summary %+v, want 5 cases, 4 expected, 3 agreeing", sum)
	}
	if k := sum.ByKind["integer"]; k.Cases != 2 || k.Agree != 1 {
		t.Errorf("integer tally %+v, want 2 cases 1 agreeing", k)
	}
	if !strings.Contains(sum.Table(), "TOTAL") {
		t.Errorf("table lacks a TOTAL row:\n%s", sum.Table())
	}
}

// A malformed line does not hide the other lines' verdicts: each valid line
// is printed, and the error names the bad line.
func TestRunCasesMalformedLine(t *testing.T) {
	var in strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&in, `{"id":"c%d","gold":"2","pred":"\\boxed{2}"}`+"\n", i)
	}
	in.WriteString("not json\n")
	in.WriteString(`{"id":"c7","gold":"2","pred":"\\boxed{3}"}` + "\n")
	var out bytes.Buffer
	sum, err := cases.RunCases(context.Background(), strings.NewReader(in.String()), &out, math.New())
	if err == nil || !strings.Contains(err.Error(), "line 6:") || strings.Contains(err.Error(), "line 7") {
		t.Fatalf("want an error naming line 6 only, got %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 6 || sum.Cases != 6 {
		t.Fatalf("printed %d verdicts (summary %d), want 6:\n%s", len(lines), sum.Cases, out.String())
	}
	for i, l := range lines {
		var r cases.Result
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		want := fmt.Sprintf("c%d", i+1)
		if i == 5 {
			want = "c7"
		}
		if r.ID != want || r.Correct != (i < 5) {
			t.Errorf("verdict %d = %+v, want id %s correct %v", i+1, r, want, i < 5)
		}
	}
}

func TestReadSamplesFormats(t *testing.T) {
	in := strings.Join([]string{
		`{"idx":0,"gt":"2","answer":"2","code":["so \\boxed{2}","\\boxed{3}"],"score":[true,false]}`,
		`{"qid":"7","gold":"52","rollouts":[{"rollout":0,"text":"\\boxed{52}","correct":true}]}`,
		`{"question":"q","ground_truth":"3+4=<<3+4=7>>7\nA: 7","6b_finetuning":{"is_correct":false,"solution":"A: 8"}}`,
		`{"problem_id":"p1","sample_index":2,"completion":"#### 5","answer":"5","correct":true}`,
		`{"problem_id":"p2","completions":["1","2"],"reference":"2"}`,
		`{"problem_id":"p3","completion":"no reference here"}`,
	}, "\n")
	var got []cases.Sample
	if err := cases.ReadSamples(strings.NewReader(in), func(s cases.Sample) error {
		got = append(got, s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ids := []string{"0/0", "0/1", "7/0", "3/6b_finetuning", "p1/2", "p2/0", "p2/1"}
	if len(got) != len(ids) {
		t.Fatalf("got %d samples, want %d: %+v", len(got), len(ids), got)
	}
	for i, id := range ids {
		if got[i].ID != id {
			t.Errorf("sample %d id %q, want %q", i, got[i].ID, id)
		}
	}
	if !got[3].ReferenceIsSolution || got[3].Label == nil || *got[3].Label {
		t.Errorf("GPT-3 sample: %+v", got[3])
	}
	if got[5].Label != nil {
		t.Errorf("unlabelled Reach sample has a label")
	}
}

func TestBench(t *testing.T) {
	in := `{"idx":0,"gt":"2","answer":"2","code":["so \\boxed{2}","\\boxed{3}"],"score":[true,false]}` + "\n" +
		`{"question":"q","ground_truth":"3+4=<<3+4=7>>7\nA: 7","6b_finetuning":{"is_correct":true,"solution":"A: 7"}}`
	var out bytes.Buffer
	res, err := cases.Bench(context.Background(), strings.NewReader(in), &out, math.New())
	if err != nil {
		t.Fatal(err)
	}
	if res.Samples != 3 || res.Labelled != 3 || res.Agree != 3 || res.Verdicts < 3 || res.PerSecond() <= 0 {
		t.Errorf("bench result %+v", res)
	}
	if !strings.Contains(out.String(), "verdicts/s") {
		t.Errorf("report lacks verdicts/s:\n%s", out.String())
	}
}

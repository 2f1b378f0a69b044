package jobs_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/export"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
)

// policySpec is a comparison whose counts depend on the grading policy.
// Base carries its file's verdicts (one correct by a bare last number, one
// correct though cut by the length limit: both count under either policy).
// RL is graded by Reach: on t1 one \boxed{} and one last-number answer, on
// t2 a \boxed{7} cut by the length limit and a wrong one, on t3 a cut
// last-number answer and a \boxed{}. Strict counts RL c = 1, 0, 1 (pass@1
// 33.33 %), lenient 2, 1, 2 (83.33 %); the verifier calls 5 RL samples
// correct under both.
func policySpec(t *testing.T) intake.Spec {
	t.Helper()
	dir := t.TempDir()
	write := func(name, body string) intake.File {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return intake.LocalFile(p)
	}
	ds := write("dataset.jsonl", `{"id": "t1", "problem": "Seven groups of six shake hands within the group. How many handshakes?", "answer": "105"}
{"id": "t2", "problem": "x + 3 = 10. What is x?", "answer": "7"}
{"id": "t3", "problem": "x - 4 = 8. What is x?", "answer": "12"}
`)
	base := write("base.jsonl", `{"problem_id": "t1", "sample_index": 0, "completion": "Seven groups of 15 handshakes: 7 * 15 = 105", "finish_reason": "stop", "correct": true}
{"problem_id": "t1", "sample_index": 1, "completion": "So \\boxed{90}.", "finish_reason": "stop", "correct": false}
{"problem_id": "t2", "sample_index": 0, "completion": "Subtracting 3 from both sides, x = 7", "finish_reason": "length", "correct": true}
{"problem_id": "t2", "sample_index": 1, "completion": "So \\boxed{8}.", "finish_reason": "stop", "correct": false}
{"problem_id": "t3", "sample_index": 0, "completion": "So \\boxed{12}.", "finish_reason": "stop", "correct": true}
{"problem_id": "t3", "sample_index": 1, "completion": "So \\boxed{11}.", "finish_reason": "stop", "correct": false}
`)
	rl := write("rl.jsonl", `{"problem_id": "t1", "sample_index": 0, "completion": "So \\boxed{105}.", "finish_reason": "stop"}
{"problem_id": "t1", "sample_index": 1, "completion": "Seven groups of 15 handshakes: 7 * 15 = 105", "finish_reason": "stop"}
{"problem_id": "t2", "sample_index": 0, "completion": "Subtracting 3 from both sides: \\boxed{7}", "finish_reason": "length"}
{"problem_id": "t2", "sample_index": 1, "completion": "So \\boxed{8}.", "finish_reason": "stop"}
{"problem_id": "t3", "sample_index": 0, "completion": "Adding 4 to both sides, x = 12", "finish_reason": "length"}
{"problem_id": "t3", "sample_index": 1, "completion": "So \\boxed{12}.", "finish_reason": "stop"}
`)
	return intake.Spec{Name: "policy export", Dataset: ds,
		Models: []intake.Model{{Name: "Base", File: base}, {Name: "RL", File: rl}}}
}

// exported reads comparison id's export in format through export.Comparison
// (the web download's and `reach export`'s path).
func exported(t *testing.T, st *store.Store, id int64, format string) []export.Record {
	t.Helper()
	var b bytes.Buffer
	if err := export.Comparison(context.Background(), &b, st, id, format); err != nil {
		t.Fatalf("export %s: %v", format, err)
	}
	if format == "parquet" {
		rows, err := parquet.Read[export.Record](bytes.NewReader(b.Bytes()), int64(b.Len()))
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	var out []export.Record
	sc := bufio.NewScanner(&b)
	for sc.Scan() {
		var r export.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestExportCountsFollowPolicy (grading policy shown = counted, part 2):
// under both policies, each export format's `correct` summed per model and
// problem equals the aggregate's c (run_counts), so the export's pass@1 is
// the report's; `verdict` stays the verifier's. A reviewer's override and
// the file's verdicts count as they are. The policy's scope on the
// comparison page (store.PolicyScopeOf) is checked on the same samples.
func TestExportCountsFollowPolicy(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	rep := e.importReady(t, policySpec(t))
	id := rep.ComparisonID

	check := func(when, policy string, rep *analysis.Report, wantRLPass1 float64, wantCounted int) {
		t.Helper()
		c, err := e.st.GetComparison(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		counts, err := e.st.CountsForComparison(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		key := map[int64]string{}
		for _, row := range rep.Rows {
			key[row.ProblemID] = row.Key
		}
		// What the aggregate counts, by model and problem key.
		type cell struct{ n, c int }
		agg := map[string]map[string]cell{}
		for _, run := range c.Runs {
			agg[run.ModelName] = map[string]cell{}
			for _, x := range counts[run.ID] {
				agg[run.ModelName][key[x.ProblemID]] = cell{x.N, x.C}
			}
		}
		for _, format := range []string{"jsonl", "parquet"} {
			recs := exported(t, e.st, id, format)
			got := map[string]map[string]cell{}
			verifierCorrect, counted := 0, 0
			for _, r := range recs {
				if got[r.Model] == nil {
					got[r.Model] = map[string]cell{}
				}
				x := got[r.Model][r.Problem]
				x.n++
				if r.Correct == nil {
					t.Fatalf("%s %s: record %s/%s #%d has no correct field", when, format, r.Model, r.Problem, r.SampleIndex)
				}
				if *r.Correct {
					x.c++
				}
				got[r.Model][r.Problem] = x
				if r.GradingPolicy != policy {
					t.Errorf("%s %s: grading_policy %q; want %s", when, format, r.GradingPolicy, policy)
				}
				if r.Model == "RL" && r.Verdict == "correct" {
					verifierCorrect++
				}
				if r.Model == "RL" && *r.Correct {
					counted++
				}
				if *r.Correct && r.Verdict != "correct" {
					t.Errorf("%s %s: %s/%s #%d counted with verdict %s", when, format, r.Model, r.Problem, r.SampleIndex, r.Verdict)
				}
			}
			for model, byKey := range agg {
				for k, want := range byKey {
					if got[model][k] != want {
						t.Errorf("%s %s: %s on %s: export n=%d c=%d; aggregate n=%d c=%d", when, format, model, k,
							got[model][k].n, got[model][k].c, want.n, want.c)
					}
				}
				if len(got[model]) != len(byKey) {
					t.Errorf("%s %s: %s: export has %d problems, aggregate %d", when, format, model, len(got[model]), len(byKey))
				}
			}
			// pass@1 from the export (mean of c/n) is the report's.
			for i, m := range rep.Models {
				sum := 0.0
				for _, x := range got[m.Name] {
					sum += float64(x.c) / float64(x.n)
				}
				if p := pct(sum / float64(len(got[m.Name]))); p != pct(m.Pass1) {
					t.Errorf("%s %s: %s pass@1 from the export %.2f; the report's %.2f", when, format, m.Name, p, 100*m.Pass1)
				}
				if i == 1 && pct(m.Pass1) != wantRLPass1 {
					t.Errorf("%s: RL pass@1 %.2f; want %.2f", when, 100*m.Pass1, wantRLPass1)
				}
			}
			if verifierCorrect != 5 || counted != wantCounted {
				t.Errorf("%s %s: RL verdict correct %d, counted %d; want 5, %d", when, format, verifierCorrect, counted, wantCounted)
			}
		}
	}
	scope := func(when string, want store.PolicyScope) {
		t.Helper()
		got, err := e.st.PolicyScopeOf(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: policy scope %+v; want %+v", when, got, want)
		}
	}

	check("strict", store.PolicyStrict, rep, 33.33, 2)
	scope("strict", store.PolicyScope{Graded: 6, FileVerdicts: 6, Fallback: 2, Truncated: 1})

	if err := jobs.SetGradingPolicy(ctx, e.client, e.st, id, 0, store.PolicyLenient); err != nil {
		t.Fatal(err)
	}
	check("lenient", store.PolicyLenient, e.waitReady(t, id), 83.33, 5)
	scope("lenient", store.PolicyScope{Graded: 6, FileVerdicts: 6, Fallback: 2, Truncated: 1})

	// Back to strict, and a reviewer confirms RL's last-number answer on
	// t1: an override counts under either policy.
	if err := jobs.SetGradingPolicy(ctx, e.client, e.st, id, 0, store.PolicyStrict); err != nil {
		t.Fatal(err)
	}
	rep = e.waitReady(t, id)
	var t1 int64
	for _, row := range rep.Rows {
		if row.Key == "t1" {
			t1 = row.ProblemID
		}
	}
	c, _ := e.st.GetComparison(ctx, id)
	if _, err := e.st.OverrideSample(ctx, store.SampleOverride{ComparisonID: id, RunID: c.Runs[1].ID, ProblemID: t1, SampleIndex: 1,
		Status: store.SampleCorrect, Note: "the last line is the answer"}); err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Build(ctx, e.st, id)
	if err != nil {
		t.Fatal(err)
	}
	check("strict with an override", store.PolicyStrict, rep, 50, 3)
	scope("strict with an override", store.PolicyScope{Graded: 5, FileVerdicts: 6, Overrides: 1, Fallback: 1, Truncated: 1})
}

package store_test

import (
	"context"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// TestMigrationGradingCounts: migration 00180 applied to a database holding
// runs stored under the previous schema fills run_grading at once (every
// group of PolicyScope, the replaced file verdicts and the totals as
// scanning the samples gives them, a pending sample and a code problem's
// among them), and an override and its undo afterwards keep them so.
func TestMigrationGradingCounts(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	pid, err := st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Back to the schema before 00180, as goose's down does.
	if _, err := st.Pool().Exec(ctx, `DROP TABLE run_grading; DELETE FROM goose_db_version WHERE version_id = 180`); err != nil {
		t.Fatal(err)
	}
	did, err := st.CreateDataset(ctx, "mixed", "mixed.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.InsertProblems(ctx, did, []store.Problem{{Idx: 0, Key: "m", Statement: "1+1", Reference: "2", Kind: "math"},
		{Idx: 1, Key: "c", Statement: "def f(): return 2", Reference: "assert f() == 2", Kind: "code"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishDataset(ctx, did); err != nil {
		t.Fatal(err)
	}
	cid, err := st.CreateComparison(ctx, store.NewComparison{Name: "mixed", DatasetID: did, Status: store.StatusReady, ProjectID: pid,
		Runs: []store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}, {ModelName: "counts", Role: "checkpoint"}}})
	if err != nil {
		t.Fatal(err)
	}
	// The runs as stored (GetComparison reads run_grading, not there yet).
	var c store.Comparison
	rows, err := st.Pool().Query(ctx, `SELECT id FROM runs WHERE comparison_id = $1 ORDER BY position`, cid)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r store.Run
		if err := rows.Scan(&r.ID); err != nil {
			t.Fatal(err)
		}
		c.Runs = append(c.Runs, r)
	}
	if rows.Err() != nil || len(c.Runs) != 3 {
		t.Fatalf("runs of comparison %d: %v, %d", cid, rows.Err(), len(c.Runs))
	}
	ps, err := st.Problems(ctx, did, false)
	if err != nil {
		t.Fatal(err)
	}
	math, code := ps[0].ID, ps[1].ID
	yes, no := true, false
	var batch []store.Sample
	for _, r := range c.Runs[:2] {
		batch = append(batch,
			// file verdicts, one of them replaced by the verifier's
			store.Sample{RunID: r.ID, ProblemID: math, SampleIndex: 0, Completion: "2", FileCorrect: &yes, Status: "correct", VerdictSource: "file"},
			store.Sample{RunID: r.ID, ProblemID: math, SampleIndex: 1, Completion: "\\boxed{3}", FileCorrect: &no, Status: "incorrect", VerdictSource: "math", Rule: "boxed"},
			// the verifier's: a fallback answer, a cut completion, a plain one
			store.Sample{RunID: r.ID, ProblemID: math, SampleIndex: 2, Completion: "so 2", Status: "correct", VerdictSource: "math", Rule: "last-number"},
			store.Sample{RunID: r.ID, ProblemID: math, SampleIndex: 3, Completion: "\\boxed{2}", FinishReason: "length", Status: "correct", VerdictSource: "math", Rule: "boxed"},
			store.Sample{RunID: r.ID, ProblemID: math, SampleIndex: 4, Completion: "\\boxed{2}", Status: "correct", VerdictSource: "math", Rule: "boxed+latex"},
			store.Sample{RunID: r.ID, ProblemID: math, SampleIndex: 5, Completion: "no idea", Status: "pending"},
			// graded by tests; one to be overridden
			store.Sample{RunID: r.ID, ProblemID: code, SampleIndex: 0, Completion: "def f(): return 2", Status: "correct", VerdictSource: "code"},
			store.Sample{RunID: r.ID, ProblemID: code, SampleIndex: 1, Completion: "def f(): return 3", Status: "incorrect", VerdictSource: "code", FinishReason: "length"})
	}
	if err := st.InsertSamples(ctx, batch); err != nil {
		t.Fatal(err)
	}
	// A reviewer's override under the old schema (OverrideSample would
	// aggregate into run_grading, not there yet).
	if _, err := st.Pool().Exec(ctx, `UPDATE samples SET override_from = status, status = 'correct', override_at = now()
		WHERE run_id = $1 AND problem_id = $2 AND sample_index = 1`, c.Runs[1].ID, code); err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	scope := testdb.CheckGrading(t, st, cid, "migrated")
	want := store.PolicyScope{Graded: 8, FileVerdicts: 2, Overrides: 1, Code: 3, Fallback: 2, Truncated: 2}
	if scope != want {
		t.Errorf("migrated: scanning the samples gives %+v; want %+v (the data above)", scope, want)
	}

	override := func(run, problem int64, idx int, status, when string) {
		t.Helper()
		if _, err := st.OverrideSample(ctx, store.SampleOverride{ComparisonID: cid, RunID: run, ProblemID: problem, SampleIndex: idx, Status: status}); err != nil {
			t.Fatal(err)
		}
		testdb.CheckGrading(t, st, cid, when)
	}
	override(c.Runs[1].ID, code, 1, store.SampleIncorrect, "the old override undone")
	override(c.Runs[0].ID, math, 1, store.SampleCorrect, "a replaced file verdict overridden")
	override(c.Runs[0].ID, math, 2, store.SampleIncorrect, "a fallback answer overridden")
	override(c.Runs[0].ID, math, 0, store.SampleIncorrect, "a file verdict overridden")
	override(c.Runs[0].ID, math, 0, store.SampleCorrect, "a file verdict's override undone")
	if err := st.ClearRun(ctx, c.Runs[0].ID); err != nil {
		t.Fatal(err)
	}
	testdb.CheckGrading(t, st, cid, "a run cleared")
}

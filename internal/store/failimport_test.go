package store_test

import (
	"context"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// After a failed import nothing of it is kept, and its progress says so: no
// stage after the import shows done, and a job of the comparison still
// stopping cannot report its stage running or done again (a trial saw a
// model "verified" next to "nothing was kept", and one "running · 100 %"
// for good).
func TestFailedImportProgress(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	pid, err := st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cid, runs, _ := tiny(t, st, pid)
	base, rl := runs[0].ID, runs[1].ID
	for _, p := range []store.Progress{
		{RunID: rl, Stage: "import", Status: "done", Done: 6, Total: 6},
		{RunID: rl, Stage: "verify", Status: "done", Done: 6, Total: 6},
		{RunID: rl, Stage: "aggregate", Status: "done"},
		{RunID: base, Stage: "import", Status: "running", Done: 3, Total: 6},
	} {
		if err := st.SetProgress(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.FailComparisonImport(ctx, cid, base, "base.jsonl:3: invalid JSON", true); err != nil {
		t.Fatal(err)
	}
	// The stopping jobs report once more.
	for _, p := range []store.Progress{
		{RunID: rl, Stage: "import", Status: "running", Done: 6, Total: 6},
		{RunID: rl, Stage: "verify", Status: "done", Done: 6, Total: 6},
	} {
		if err := st.SetProgress(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := st.ProgressForComparison(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	stages := map[int64]map[string]store.Progress{}
	for _, p := range ps {
		if stages[p.RunID] == nil {
			stages[p.RunID] = map[string]store.Progress{}
		}
		stages[p.RunID][p.Stage] = p
	}
	for _, run := range []int64{base, rl} {
		if len(stages[run]) != 1 || stages[run]["import"].Status != "failed" {
			t.Errorf("run %d progress %+v, want only its import, failed", run, stages[run])
		}
	}
	if got := stages[rl]["import"].Error; got != "stopped: another file of the comparison failed" {
		t.Errorf("the RL model's import says %q", got)
	}
	var left int
	if err := st.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM samples WHERE run_id = ANY($1)) + (SELECT count(*) FROM run_answers WHERE run_id = ANY($1))
		+ (SELECT count(*) FROM run_counts WHERE run_id = ANY($1))`, []int64{base, rl}).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d rows of samples, answers and counts left (err %v)", left, err)
	}
}

package store_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/migrations"
)

// The tables holding rows about one sample; since migration 00181 they
// reference its run, not the sample.
var sampleRowTables = []string{"sample_judgments", "sample_reasoning_labels", "sample_scores", "verifier_audit_items", "sample_token_scores"}

// fillSampleRows writes a row of each table about every sample of
// comparison cid: what judging, labelling, scoring, a verifier audit and
// token scoring leave.
func fillSampleRows(t *testing.T, st *store.Store, cid int64) {
	t.Helper()
	ctx := context.Background()
	of := `FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.comparison_id = $1`
	for _, q := range []string{
		`INSERT INTO sample_judgments (run_id, problem_id, sample_index, verdict) SELECT s.run_id, s.problem_id, s.sample_index, 'valid' ` + of,
		`INSERT INTO sample_reasoning_labels (run_id, problem_id, sample_index, label) SELECT s.run_id, s.problem_id, s.sample_index, 'flawed' ` + of,
		`INSERT INTO sample_scores (run_id, problem_id, sample_index, perplexity) SELECT s.run_id, s.problem_id, s.sample_index, 1.5 ` + of,
		`INSERT INTO verifier_audits (comparison_id, m, seed) VALUES ($1, 10, 1)`,
		`INSERT INTO verifier_audit_items (comparison_id, run_id, problem_id, sample_index, stratum, reach_status)
			SELECT $1, s.run_id, s.problem_id, s.sample_index, 'random', s.status ` + of,
		`INSERT INTO sample_token_scores (run_id, problem_id, sample_index, role) SELECT s.run_id, s.problem_id, s.sample_index, 'base' ` + of,
	} {
		if _, err := st.Pool().Exec(ctx, q, cid); err != nil {
			t.Fatal(err)
		}
	}
}

// sampleRows counts the rows of sampleRowTables of each run, and the rows
// of all runs about a sample that does not exist.
func sampleRows(t *testing.T, st *store.Store) (byRun map[int64]int, orphans int) {
	t.Helper()
	byRun = map[int64]int{}
	for _, tb := range sampleRowTables {
		rows, err := st.Pool().Query(context.Background(), `SELECT x.run_id, count(*), count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM samples s
				WHERE s.run_id = x.run_id AND s.problem_id = x.problem_id AND s.sample_index = x.sample_index))
			FROM `+tb+` x GROUP BY x.run_id`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var run int64
			var n, o int
			if err := rows.Scan(&run, &n, &o); err != nil {
				t.Fatal(err)
			}
			byRun[run] += n
			orphans += o
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return byRun, orphans
}

// twoFilled builds two tiny comparisons with rows of every table about
// each sample (6 samples a run, 5 rows each: 30 a run).
func twoFilled(t *testing.T, st *store.Store) (gone, kept []store.Run, gcid, kcid int64, pids []int64) {
	t.Helper()
	pid, err := st.DefaultProjectID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	gcid, gone, pids = tiny(t, st, pid)
	kcid, kept, _ = tiny(t, st, pid)
	fillSampleRows(t, st, gcid)
	fillSampleRows(t, st, kcid)
	byRun, orphans := sampleRows(t, st)
	for _, r := range append(append([]store.Run{}, gone...), kept...) {
		if byRun[r.ID] != 30 {
			t.Fatalf("before: run %d has %d rows about its samples, want 30", r.ID, byRun[r.ID])
		}
	}
	if orphans != 0 {
		t.Fatalf("before: %d rows about samples that do not exist", orphans)
	}
	return gone, kept, gcid, kcid, pids
}

// wantRows checks each run's rows about its samples and that none is left
// about a sample that is gone.
func wantRows(t *testing.T, st *store.Store, want map[int64]int) {
	t.Helper()
	byRun, orphans := sampleRows(t, st)
	for run, n := range want {
		if byRun[run] != n {
			t.Errorf("run %d has %d rows about its samples, want %d", run, byRun[run], n)
		}
	}
	if orphans != 0 {
		t.Errorf("%d rows about samples that are gone", orphans)
	}
}

// TestClearRunDeletesSampleRows: a run cleared for a re-import loses the
// judgments, labels, scores, audit items and token scores of its samples;
// its other run and another comparison keep theirs.
func TestClearRunDeletesSampleRows(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	gone, kept, _, _, _ := twoFilled(t, st)
	if err := st.ClearRun(ctx, gone[0].ID); err != nil {
		t.Fatal(err)
	}
	wantRows(t, st, map[int64]int{gone[0].ID: 0, gone[1].ID: 30, kept[0].ID: 30, kept[1].ID: 30})
}

// TestDeleteComparisonDeletesSampleRows: the batches of a comparison's
// delete take the rows about each batch's samples with them (a cancelled
// delete leaves none about a deleted sample), across runs and problems;
// another comparison keeps its rows.
func TestDeleteComparisonDeletesSampleRows(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	gone, kept, gcid, _, _ := twoFilled(t, st)
	defer store.SetDeleteBatch(4)()
	if err := st.DeleteSamplesInBatches(ctx, gcid); err != nil {
		t.Fatal(err)
	}
	wantRows(t, st, map[int64]int{gone[0].ID: 0, gone[1].ID: 0, kept[0].ID: 30, kept[1].ID: 30})
	if err := st.DeleteComparison(ctx, gcid); err != nil {
		t.Fatal(err)
	}
	wantRows(t, st, map[int64]int{kept[0].ID: 30, kept[1].ID: 30})
}

// TestFailedImportDeletesSampleRows: a failed import deletes the rows about
// the samples it deletes; another comparison keeps its rows.
func TestFailedImportDeletesSampleRows(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	gone, kept, gcid, _, _ := twoFilled(t, st)
	if err := st.FailComparisonImport(ctx, gcid, gone[0].ID, "base.jsonl:3: invalid JSON", true); err != nil {
		t.Fatal(err)
	}
	wantRows(t, st, map[int64]int{gone[0].ID: 0, gone[1].ID: 0, kept[0].ID: 30, kept[1].ID: 30})
}

// TestDropFailedDatasetDeletesSampleRows: dropping a failed comparison's
// dataset deletes its problems and with them the samples of its sampled
// run (an import's samples went with the failure); the rows about them go
// too, though the run stays.
func TestDropFailedDatasetDeletesSampleRows(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	gone, kept, gcid, _, _ := twoFilled(t, st)
	if _, err := st.Pool().Exec(ctx, `UPDATE runs SET endpoint_url = 'http://127.0.0.1:1/v1' WHERE id = $1`, gone[1].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE datasets SET origin_comparison_id = $1 WHERE id = (SELECT dataset_id FROM comparisons WHERE id = $1)`, gcid); err != nil {
		t.Fatal(err)
	}
	if err := st.FailComparisonImport(ctx, gcid, gone[0].ID, "base.jsonl:3: invalid JSON", true); err != nil {
		t.Fatal(err)
	}
	wantRows(t, st, map[int64]int{gone[0].ID: 0, gone[1].ID: 30})
	done, err := st.DropFailedDataset(ctx, gcid)
	if err != nil || !done {
		t.Fatalf("drop the failed dataset: %v, %v", done, err)
	}
	var samples int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM samples WHERE run_id = $1`, gone[1].ID).Scan(&samples); err != nil || samples != 0 {
		t.Fatalf("the sampled run has %d samples left (%v)", samples, err)
	}
	wantRows(t, st, map[int64]int{gone[1].ID: 0, kept[0].ID: 30, kept[1].ID: 30})
}

// TestSampleRowsNeedTheSample: judgments, scores, token scores and reasoning
// labels are written for a sample that exists, and not for one deleted
// before, or while the write waited for the delete to commit.
func TestSampleRowsNeedTheSample(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	pid, err := st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cid, runs, pids := tiny(t, st, pid)
	run := runs[0].ID
	write := func(p int64, i int) error {
		if err := st.SaveJudgment(ctx, store.Judgment{RunID: run, ProblemID: p, SampleIndex: i, Verdict: "valid"}); err != nil {
			return err
		}
		if err := st.SaveScore(ctx, store.Score{RunID: run, ProblemID: p, SampleIndex: i, Tokens: 3, SumLogprob: -1, Perplexity: 1.4}); err != nil {
			return err
		}
		if err := st.SaveTokenScore(ctx, store.TokenScore{RunID: run, ProblemID: p, SampleIndex: i, Role: "base"}); err != nil {
			return err
		}
		return st.SetReasoningLabel(ctx, store.ReasoningLabel{ComparisonID: cid, RunID: run, ProblemID: p, SampleIndex: i, Label: store.ReasoningValid})
	}
	count := func(p int64, i int) (n int) {
		t.Helper()
		for _, tb := range sampleRowTables {
			var k int
			if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM `+tb+` WHERE run_id = $1 AND problem_id = $2 AND sample_index = $3`, run, p, i).Scan(&k); err != nil {
				t.Fatal(err)
			}
			n += k
		}
		return n
	}
	if err := write(pids[0], 0); err != nil {
		t.Fatal(err)
	}
	if n := count(pids[0], 0); n != 4 {
		t.Fatalf("an existing sample got %d rows, want 4", n)
	}

	if _, err := st.Pool().Exec(ctx, `DELETE FROM samples WHERE run_id = $1 AND problem_id = $2 AND sample_index = 1`, run, pids[0]); err != nil {
		t.Fatal(err)
	}
	if err := write(pids[0], 1); !errors.Is(err, store.ErrNotFound) { // the label says so; the job's writes store nothing
		t.Fatalf("writing about a deleted sample: %v, want ErrNotFound from the label", err)
	}
	if n := count(pids[0], 1); n != 0 {
		t.Errorf("a deleted sample got %d rows", n)
	}

	// A delete not yet committed: the write waits for it, then finds no
	// sample.
	tx, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) // a no-op after Commit
	if err := tx.ClearRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	go func() {
		res <- st.SaveJudgment(ctx, store.Judgment{RunID: run, ProblemID: pids[1], SampleIndex: 2, Verdict: "flawed"})
	}()
	waitForLockWait(t, st)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if n := count(pids[1], 2); n != 0 {
		t.Errorf("a sample deleted while its judgment was written has %d rows", n)
	}
}

// TestClearRunWaitsForAWrite: a judgment being written when a run is
// cleared (its writer holds the sample) is deleted with the samples once
// it commits, not left behind.
func TestClearRunWaitsForAWrite(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	pid, err := st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, runs, pids := tiny(t, st, pid)
	run := runs[0].ID
	tx, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) // a no-op after Commit
	if err := tx.SaveJudgment(ctx, store.Judgment{RunID: run, ProblemID: pids[0], SampleIndex: 0, Verdict: "valid"}); err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	go func() { res <- st.ClearRun(ctx, run) }()
	waitForLockWait(t, st)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	wantRows(t, st, map[int64]int{run: 0})
}

// waitForLockWait returns once a session of the test's database waits on a
// lock.
func waitForLockWait(t *testing.T, st *store.Store) {
	t.Helper()
	for range 500 {
		var n int
		if err := st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no session waited on the lock within 5 s")
}

// TestMigrationSampleRowsByRun: migration 00181 applied to a database
// holding rows of the five tables under the previous schema (each
// referencing its sample) keeps every row, and leaves each referencing its
// run: deleting a sample no longer deletes them, deleting the run does.
func TestMigrationSampleRowsByRun(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	// Back to the schema before 00181 with its own down section, as goose
	// does (whichever migrations before it exist: only 00181 is undone).
	up, down := migrationSections(t, "00181_")
	if !strings.Contains(up, "REFERENCES runs") {
		t.Fatal("00181's up section does not reference runs")
	}
	if _, err := st.Pool().Exec(ctx, down+`; DELETE FROM goose_db_version WHERE version_id = 181`); err != nil {
		t.Fatal(err)
	}
	if got := sampleKeys(t, st); got != 5 {
		t.Fatalf("before the migration %d of the five tables reference samples, want 5", got)
	}
	gone, kept, _, _, pids := twoFilled(t, st)
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sampleKeys(t, st); got != 0 {
		t.Fatalf("after the migration %d of the five tables reference samples", got)
	}
	var byRun int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND confrelid = 'runs'::regclass
			AND confdeltype = 'c' AND conrelid::regclass::text = ANY($1)
			AND conkey = ARRAY[(SELECT attnum FROM pg_attribute WHERE attrelid = conrelid AND attname = 'run_id')]`, sampleRowTables).Scan(&byRun); err != nil {
		t.Fatal(err)
	}
	if byRun != 5 {
		t.Fatalf("%d of the five tables reference runs(id) ON DELETE CASCADE, want 5", byRun)
	}
	all := map[int64]int{}
	for _, r := range append(append([]store.Run{}, gone...), kept...) {
		all[r.ID] = 30
	}
	wantRows(t, st, all) // nothing lost
	// A sample deleted outside the store's code keeps its rows now (the
	// store deletes them itself); its run's delete takes them.
	if _, err := st.Pool().Exec(ctx, `DELETE FROM samples WHERE run_id = $1 AND problem_id = $2 AND sample_index = 0`, gone[0].ID, pids[0]); err != nil {
		t.Fatal(err)
	}
	if byRun, _ := sampleRows(t, st); byRun[gone[0].ID] != 30 {
		t.Fatalf("deleting a sample deleted %d rows about it: the key to samples is still there", 30-byRun[gone[0].ID])
	}
	if _, err := st.Pool().Exec(ctx, `DELETE FROM runs WHERE id = $1`, gone[0].ID); err != nil {
		t.Fatal(err)
	}
	all[gone[0].ID] = 0
	wantRows(t, st, all)
}

// migrationSections returns the up and down SQL of the migration whose
// file name starts with prefix.
func migrationSections(t *testing.T, prefix string) (up, down string) {
	t.Helper()
	names, err := fs.Glob(migrations.FS, prefix+"*.sql")
	if err != nil || len(names) != 1 {
		t.Fatalf("migration %s*: %v, %v", prefix, names, err)
	}
	b, err := fs.ReadFile(migrations.FS, names[0])
	if err != nil {
		t.Fatal(err)
	}
	up, down, ok := strings.Cut(string(b), "-- +goose Down")
	if !ok {
		t.Fatal(fmt.Errorf("%s has no down section", names[0]))
	}
	return up, down
}

// sampleKeys counts the tables of sampleRowTables with a foreign key to
// samples.
func sampleKeys(t *testing.T, st *store.Store) (n int) {
	t.Helper()
	if err := st.Pool().QueryRow(context.Background(), `SELECT count(DISTINCT conrelid) FROM pg_constraint WHERE contype = 'f'
		AND confrelid = 'samples'::regclass AND conrelid::regclass::text = ANY($1)`, sampleRowTables).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestVerifierAuditSkipsDeletedSamples: an audit started while a run's
// samples are being deleted waits for the delete and keeps no item of a
// deleted sample; the other run's samples are audited.
func TestVerifierAuditSkipsDeletedSamples(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	pid, err := st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cid, runs, pids := tiny(t, st, pid)
	tx, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) // a no-op after Commit
	if err := tx.ClearRun(ctx, runs[0].ID); err != nil {
		t.Fatal(err)
	}
	type result struct {
		n   int64
		err error
	}
	res := make(chan result, 1)
	go func() {
		// Every sample graded incorrect on either problem is deciding:
		// 5 of the first run, 3 of the second.
		n, err := st.NewVerifierAudit(ctx, cid, 10, 1, 0, pids, pids, nil)
		res <- result{n, err}
	}()
	waitForLockWait(t, st)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	wantRows(t, st, map[int64]int{runs[0].ID: 0, runs[1].ID: 3})
	if r.n != 3 {
		t.Errorf("the audit reports %d items, want 3", r.n)
	}
}

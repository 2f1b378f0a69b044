package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// samplesDigest is the count and a digest of every sample (all columns),
// to tell that a migration kept each row as it was.
func samplesDigest(t *testing.T, st *store.Store) (n int, digest string) {
	t.Helper()
	if err := st.Pool().QueryRow(context.Background(), `SELECT count(*), COALESCE(md5(string_agg(s::text, '|' ORDER BY run_id, problem_id, sample_index)), '')
		FROM samples s`).Scan(&n, &digest); err != nil {
		t.Fatal(err)
	}
	return n, digest
}

func relKind(t *testing.T, st *store.Store, name string) string {
	t.Helper()
	var k *string
	if err := st.Pool().QueryRow(context.Background(), `SELECT (SELECT relkind::text FROM pg_class WHERE oid = to_regclass($1))`, name).Scan(&k); err != nil {
		t.Fatal(err)
	}
	if k == nil {
		return ""
	}
	return *k
}

// indexOf returns the table run runID's search index is on and whether it
// is partial.
func indexOf(t *testing.T, st *store.Store, runID int64) (table string, partial bool) {
	t.Helper()
	if err := st.Pool().QueryRow(context.Background(), `SELECT indrelid::regclass::text, indpred IS NOT NULL FROM pg_index
		WHERE indexrelid = to_regclass($1)`, store.SearchIndexName(runID)).Scan(&table, &partial); err != nil {
		t.Fatalf("search index of run %d: %v", runID, err)
	}
	return table, partial
}

func countIn(t *testing.T, st *store.Store, q string, args ...any) int {
	t.Helper()
	var n int
	if err := st.Pool().QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMigrationSamplesByRun applies migration 00182 to a database holding
// samples in one table (the schema before it): no sample is lost or
// changed, the runs from before share samples_legacy (with partial search
// indexes), a run made after gets its own partition (with an ordinary
// one), the deletes that the dropped foreign keys did still happen, and
// the down section puts every sample back in one table.
func TestMigrationSamplesByRun(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	_, down := migrationSections(t, "00182_")
	if _, err := st.Pool().Exec(ctx, down+`; DELETE FROM goose_db_version WHERE version_id = 182`); err != nil {
		t.Fatal(err)
	}
	if k := relKind(t, st, "samples"); k != "r" {
		t.Fatalf("before the migration samples is of kind %q, want a table (r)", k)
	}
	gone, kept, gcid, _, pids := twoFilled(t, st)
	u, err := st.CreateUser(ctx, "reviewer@example.org", "x", false, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE samples SET override_by = $1, override_from = status WHERE run_id = $2`, u.ID, kept[0].ID); err != nil {
		t.Fatal(err)
	}
	n, digest := samplesDigest(t, st)
	if n != 24 {
		t.Fatalf("%d samples before, want 24", n)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if k := relKind(t, st, "samples"); k != "p" {
		t.Fatalf("after the migration samples is of kind %q, want partitioned (p)", k)
	}
	if n2, d2 := samplesDigest(t, st); n2 != n || d2 != digest {
		t.Fatalf("after the migration %d samples (digest %s), want %d (%s)", n2, d2, n, digest)
	}
	if got := countIn(t, st, `SELECT count(*) FROM ONLY samples_legacy`); got != n {
		t.Fatalf("samples_legacy holds %d samples, want all %d", got, n)
	}
	if got := countIn(t, st, `SELECT count(*) FROM pg_inherits WHERE inhparent = 'samples'::regclass`); got != 1 {
		t.Fatalf("%d partitions after the migration, want 1 (samples_legacy)", got)
	}
	if _, err := st.BuildSearchIndex(ctx, kept[0].ID); err != nil {
		t.Fatal(err)
	}
	if table, partial := indexOf(t, st, kept[0].ID); table != "samples_legacy" || !partial {
		t.Errorf("a run from before the migration: search index on %s (partial %v), want a partial index of samples_legacy", table, partial)
	}

	// A comparison made after: a partition per run, an index of it.
	ncid, nruns, _ := tiny(t, st, 0)
	for _, r := range nruns {
		if k := relKind(t, st, store.SamplePartition(r.ID)); k != "r" {
			t.Fatalf("run %d made after the migration has no partition of its own (%q)", r.ID, k)
		}
		if got := countIn(t, st, `SELECT count(*) FROM `+store.SamplePartition(r.ID)); got != 6 {
			t.Errorf("run %d's partition holds %d samples, want its 6", r.ID, got)
		}
	}
	if _, err := st.BuildSearchIndex(ctx, nruns[0].ID); err != nil {
		t.Fatal(err)
	}
	if table, partial := indexOf(t, st, nruns[0].ID); table != store.SamplePartition(nruns[0].ID) || partial {
		t.Errorf("a run made after the migration: search index on %s (partial %v), want an index of its partition", table, partial)
	}

	// No partition takes a sample of a run that does not exist (the foreign
	// key's check).
	if _, err := st.Pool().Exec(ctx, `INSERT INTO samples (run_id, problem_id, sample_index, completion) VALUES ($1 + 1000, $2, 0, 'x')`,
		nruns[1].ID, pids[0]); err == nil {
		t.Error("a sample of a run that does not exist was stored")
	}

	// Deletes: a comparison from before (rows deleted in samples_legacy)
	// and one made after (partitions emptied, then dropped).
	if err := st.DeleteComparison(ctx, gcid); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteComparison(ctx, ncid); err != nil {
		t.Fatal(err)
	}
	if got := countIn(t, st, `SELECT count(*) FROM samples WHERE run_id = ANY($1)`, []int64{gone[0].ID, gone[1].ID, nruns[0].ID, nruns[1].ID}); got != 0 {
		t.Errorf("%d samples of deleted comparisons left", got)
	}
	if got := countIn(t, st, `SELECT count(*) FROM samples`); got != 12 {
		t.Errorf("%d samples left, want the kept comparison's 12", got)
	}
	wantRows(t, st, map[int64]int{gone[0].ID: 0, gone[1].ID: 0, kept[0].ID: 30, kept[1].ID: 30})
	if dropped, err := st.DropOrphanSamplePartitions(ctx); err != nil || dropped != 2 {
		t.Errorf("dropped %d partitions of deleted runs (%v), want 2", dropped, err)
	}
	for _, r := range nruns {
		if k := relKind(t, st, store.SamplePartition(r.ID)); k != "" {
			t.Errorf("the partition of deleted run %d is still there", r.ID)
		}
	}
	if k := relKind(t, st, store.SearchIndexName(nruns[0].ID)); k != "" {
		t.Errorf("the search index of deleted run %d is still there", nruns[0].ID)
	}

	// A deleted user's overrides lose their author (ON DELETE SET NULL).
	if _, err := st.Pool().Exec(ctx, `DELETE FROM users WHERE id = $1`, u.ID); err != nil {
		t.Fatal(err)
	}
	if got := countIn(t, st, `SELECT count(*) FROM samples WHERE override_by IS NOT NULL`); got != 0 {
		t.Errorf("%d samples still name a deleted user", got)
	}
	// A deleted problem takes its samples (ON DELETE CASCADE).
	if _, err := st.Pool().Exec(ctx, `DELETE FROM problems WHERE id = (SELECT problem_id FROM samples WHERE run_id = $1 LIMIT 1)`, kept[0].ID); err != nil {
		t.Fatal(err)
	}
	if got := countIn(t, st, `SELECT count(*) FROM samples`); got != 6 {
		t.Errorf("%d samples after their problem's delete, want 6", got)
	}

	// Down: one table again, every sample kept.
	n, digest = samplesDigest(t, st)
	if _, err := st.Pool().Exec(ctx, down+`; DELETE FROM goose_db_version WHERE version_id = 182`); err != nil {
		t.Fatal(err)
	}
	if n2, d2 := samplesDigest(t, st); relKind(t, st, "samples") != "r" || n2 != n || d2 != digest {
		t.Errorf("after the down section: samples of kind %q, %d samples (%s), want a table of %d (%s)", relKind(t, st, "samples"), n2, d2, n, digest)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRunPartitionWaitsForNoWriter: making a run's partition waits for no
// transaction writing samples of another run, nor one writing runs (a
// foreign key on samples would have made it lock runs, problems and users
// against writers: every two transactions creating runs at once would
// deadlock).
func TestRunPartitionWaitsForNoWriter(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	_, runs, pids := tiny(t, st, 0)
	tx, err := st.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO samples (run_id, problem_id, sample_index, completion) VALUES ($1, $2, 99, 'x')`, runs[0].ID, pids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE runs SET status = status WHERE id = $1`, runs[1].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE problems SET statement = statement WHERE id = $1`, pids[1]); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		_, err := st.CreateComparison(cctx, store.NewComparison{Name: "while writing", DatasetID: mustDatasetOf(t, st, runs[0].ID),
			Status: store.StatusReady, Runs: []store.NewRun{{ModelName: "a", Role: "base"}, {ModelName: "b", Role: "rl"}}})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("creating a comparison while another transaction writes: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("creating a comparison waited 15 s for a transaction writing samples, runs and problems")
	}
}

func mustDatasetOf(t *testing.T, st *store.Store, runID int64) int64 {
	t.Helper()
	var did int64
	if err := st.Pool().QueryRow(context.Background(), `SELECT c.dataset_id FROM runs r JOIN comparisons c ON c.id = r.comparison_id WHERE r.id = $1`, runID).Scan(&did); err != nil {
		t.Fatal(err)
	}
	return did
}

// TestMigrationSearchIndexNoStats applies migration 00183 to a database
// whose search index was built before it and then ANALYZEd: the index
// keeps no statistics of its expression after it (the planner read whole
// runs with them), an index built after never gathers any, and the down
// section gives the expression its default target back.
func TestMigrationSearchIndexNoStats(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	_, down := migrationSections(t, "00183_")
	if _, err := st.Pool().Exec(ctx, down+`; DELETE FROM goose_db_version WHERE version_id = 183`); err != nil {
		t.Fatal(err)
	}
	_, runs, _ := tiny(t, st, 0)
	old, fresh := runs[0].ID, runs[1].ID
	target := func(run int64) int {
		return countIn(t, st, `SELECT coalesce(attstattarget, -1) FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum = 1`, store.SearchIndexName(run))
	}
	stats := func(run int64) int {
		return countIn(t, st, `SELECT count(*) FROM pg_stats WHERE tablename = $1`, store.SearchIndexName(run))
	}
	// An index as the builds before the migration left it.
	if _, err := st.BuildSearchIndex(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `ALTER INDEX `+store.SearchIndexName(old)+` ALTER COLUMN 1 SET STATISTICS -1`); err != nil {
		t.Fatal(err)
	}
	if err := st.AnalyzeSamples(ctx, old); err != nil {
		t.Fatal(err)
	}
	if n := stats(old); n != 1 {
		t.Fatalf("before the migration, ANALYZE left %d statistics rows of the index's expression; want 1 (the case the migration is for)", n)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if n, tg := stats(old), target(old); n != 0 || tg != 0 {
		t.Errorf("after the migration: %d statistics rows, target %d; want none and 0", n, tg)
	}
	if err := st.AnalyzeSamples(ctx, old); err != nil {
		t.Fatal(err)
	}
	if n := stats(old); n != 0 {
		t.Errorf("ANALYZE after the migration gathered %d statistics rows; want none", n)
	}
	// An index built after the migration.
	if _, err := st.BuildSearchIndex(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if err := st.AnalyzeSamples(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if n, tg := stats(fresh), target(fresh); n != 0 || tg != 0 {
		t.Errorf("an index built after the migration, ANALYZEd: %d statistics rows, target %d; want none and 0", n, tg)
	}
	if _, err := st.Pool().Exec(ctx, down); err != nil {
		t.Fatal(err)
	}
	if tg := target(old); tg != -1 {
		t.Errorf("after the down section: target %d; want -1 (the default)", tg)
	}
}

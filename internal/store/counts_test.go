package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// Two aggregations of one run at once (a late duplicate AggregateJob, or a
// resumed one beside a new one) both succeed and leave the same counts: the
// second waits for the first instead of inserting counts it did not see
// deleted (before, it failed on run_counts' key and the job was retried).
func TestConcurrentAggregationsOfARun(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	cid, runs, pids := tiny(t, st, 0)
	run := runs[0].ID

	aggregated, release := make(chan struct{}), make(chan struct{})
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Go(func() {
		errs[0] = st.WithTx(ctx, func(tx *store.Store) error {
			if err := tx.AggregateRun(ctx, run); err != nil {
				close(aggregated)
				return err
			}
			close(aggregated)
			<-release // the second aggregation starts while this one is open
			return nil
		})
	})
	<-aggregated
	wg.Go(func() {
		errs[1] = st.WithTx(ctx, func(tx *store.Store) error { return tx.AggregateRun(ctx, run) })
	})
	// Commit the first once the second waits for a lock.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var waiting int
		err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			close(release)
			wg.Wait()
			t.Fatalf("the second aggregation never waited for the first (errors %v)", errs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("aggregation %d: %v", i+1, err)
		}
	}
	if c0, c1 := cOf(t, st, cid, run, pids[0]), cOf(t, st, cid, run, pids[1]); c0 != 1 || c1 != 0 {
		t.Errorf("counts c = %d, %d; want 1, 0", c0, c1)
	}
}

// A late aggregation that waits on a sampling extension's locks must not
// call the extended run, or its comparison, ready: it has to read the
// chunks the extension committed (CI caught TestExtendN with k max 4 after
// extending to 8, under load).
func TestLateAggregationDoesNotFinishAnExtension(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	cid, runs, pids := tiny(t, st, 0)
	for _, r := range runs {
		if err := st.SetRunStatus(ctx, r.ID, store.StatusReady, ""); err != nil {
			t.Fatal(err)
		}
	}
	run := runs[0].ID
	locked, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	var extendErr error
	var once sync.Once
	wg.Go(func() {
		defer once.Do(func() { close(locked) }) // on an error too, so the test never hangs
		extendErr = st.WithTx(ctx, func(tx *store.Store) error {
			if _, err := tx.EnsureChunks(ctx, run, pids, 6, 3); err != nil {
				return err
			}
			if err := tx.StartRunSampling(ctx, run); err != nil {
				return err
			}
			if err := tx.SetComparisonStatus(ctx, cid, store.StatusSampling, ""); err != nil {
				return err
			}
			once.Do(func() { close(locked) })
			<-release
			return nil
		})
	})
	<-locked
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = st.SetRunReadyIfSettled(ctx, run) })
	wg.Go(func() { errs[1] = st.MarkComparisonReadyIfDone(ctx, cid) })
	deadline := time.Now().Add(30 * time.Second)
	for {
		var waiting int
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting >= 2 {
			break
		}
		if time.Now().After(deadline) {
			close(release)
			wg.Wait()
			t.Fatalf("the late calls never waited on the extension (errors %v, extension %v)", errs, extendErr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	if extendErr != nil {
		t.Fatal(extendErr)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	c, err := st.GetComparison(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != store.StatusSampling {
		t.Errorf("comparison %s after a late aggregation; want sampling", c.Status)
	}
	for _, r := range c.Runs {
		if r.ID == run && r.Status != store.StatusSampling {
			t.Errorf("extended run %s after a late aggregation; want sampling", r.Status)
		}
	}
}

// The ANALYZE at an import's end does not wait for another session's lock
// on the run's samples (a search index being built holds one for a minute
// on a million texts): it skips the table. The lock is held until the
// test ends, so an ANALYZE that waited would hold the test until its
// context's minute ran out and fail.
func TestAnalyzeSamplesSkipsALockedTable(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	_, runs, _ := tiny(t, st, 0)
	conn, err := st.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// The lock CREATE INDEX CONCURRENTLY takes.
	if _, err := tx.Exec(ctx, `LOCK TABLE `+store.SamplePartition(runs[0].ID)+` IN SHARE UPDATE EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := st.AnalyzeSamples(actx, runs[0].ID, runs[1].ID); err != nil {
		t.Fatalf("AnalyzeSamples with samples locked: %v", err)
	}
}

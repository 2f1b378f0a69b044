package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// TestDeleteComparisonInBatches: the samples of a comparison are deleted a
// batch at a time across runs and problems (keyset), none of another
// comparison's, and then the comparison itself.
func TestDeleteComparisonInBatches(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	pid, err := st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gone, runs, pids := tiny(t, st, pid)
	kept, keptRuns, _ := tiny(t, st, pid)
	var more []store.Sample
	for i := 3; i < 14; i++ { // 11 more per problem of the first run: batches cross problems
		for _, p := range pids {
			more = append(more, store.Sample{RunID: runs[0].ID, ProblemID: p, SampleIndex: i, Completion: "y", Status: store.SampleIncorrect})
		}
	}
	if err := st.InsertSamples(ctx, more); err != nil {
		t.Fatal(err)
	}
	count := func(cid int64) (n int64) {
		t.Helper()
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.comparison_id = $1`, cid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if g, k := count(gone), count(kept); g != 34 || k != 12 {
		t.Fatalf("before: %d and %d samples; want 34 and 12", g, k)
	}
	defer store.SetDeleteBatch(4)()
	// The batches alone, then the whole delete.
	if err := st.DeleteSamplesInBatches(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if g, k := count(gone), count(kept); g != 0 || k != 12 {
		t.Fatalf("after the batches: %d and %d samples; want 0 and 12", g, k)
	}
	if _, err := st.GetComparison(ctx, gone); err != nil {
		t.Fatalf("the comparison is gone before its last step: %v", err)
	}
	if err := st.DeleteComparison(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetComparison(ctx, gone); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted comparison read back: %v", err)
	}
	c, err := st.GetComparison(ctx, kept)
	if err != nil || len(c.Runs) != len(keptRuns) || count(kept) != 12 {
		t.Fatalf("the other comparison: %v, %d runs, %d samples", err, len(c.Runs), count(kept))
	}
}

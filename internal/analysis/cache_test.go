package analysis_test

import (
	"context"
	"testing"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// readyPair stores a ready two-model comparison with counts only: three
// problems, n = 4.
func readyPair(t *testing.T, st *store.Store) (int64, store.Comparison) {
	t.Helper()
	ctx := context.Background()
	did, err := st.CreateDataset(ctx, "three", "three.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.InsertProblems(ctx, did, []store.Problem{{Idx: 0, Key: "a", Statement: "1+1", Reference: "\\frac{1}{2}"},
		{Idx: 1, Key: "b", Statement: "2+2", Reference: "x^2"}, {Idx: 2, Key: "c", Statement: "3+3", Reference: "\\pi"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishDataset(ctx, did); err != nil {
		t.Fatal(err)
	}
	id, err := st.CreateComparison(ctx, store.NewComparison{Name: "cache", DatasetID: did, Status: store.StatusImporting,
		Runs: []store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.GetComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := st.Problems(ctx, did, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range c.Runs {
		var cs []store.Count
		for j, p := range ps {
			cs = append(cs, store.Count{RunID: r.ID, ProblemID: p.ID, N: 4, C: (i + j) % 5})
		}
		if err := st.InsertCounts(ctx, cs); err != nil {
			t.Fatal(err)
		}
		if err := st.SetRunStatus(ctx, r.ID, "ready", ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetComparisonStatus(ctx, id, store.StatusReady, ""); err != nil {
		t.Fatal(err)
	}
	return id, c
}

// Reports are computed once per change: the same entry until the counts
// (or statistics) change, and a second process reads the stored one.
func TestCacheComputesOncePerChange(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	id, c := readyPair(t, st)
	cache := analysis.NewCache(st, 4)
	e1, err := cache.Get(ctx, id, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e1.Stored || e1.Report.Models[0].Pass1 != (0.0+1+2)/12 {
		t.Fatalf("first entry stored %v, base pass@1 %v", e1.Stored, e1.Report.Models[0].Pass1)
	}
	e2, err := cache.Get(ctx, id, analysis.Options{})
	if err != nil || e2 != e1 {
		t.Fatalf("unchanged comparison: a new entry (%v)", err)
	}
	// Another process (a fresh cache) reads the stored report.
	other, err := analysis.NewCache(st, 4).Get(ctx, id, analysis.Options{})
	if err != nil || !other.Stored || other.Report.Models[0].Pass1 != e1.Report.Models[0].Pass1 || other.Report.Hash() != e1.Report.Hash() {
		t.Fatalf("stored report: %v, stored %v", err, other != nil && other.Stored)
	}
	// Variants are kept apart.
	b, err := cache.Get(ctx, id, analysis.Options{Biased: true})
	if err != nil || b == e1 || b.Report.Models[0].PassAtKBiased == nil {
		t.Fatalf("biased variant: %v", err)
	}

	// A count changes: the next Get computes the report again.
	if _, err := st.Pool().Exec(ctx, `UPDATE run_counts SET c = 4 WHERE run_id = $1`, c.Runs[0].ID); err != nil {
		t.Fatal(err)
	}
	e3, err := cache.Get(ctx, id, analysis.Options{})
	if err != nil || e3 == e1 || e3.Report.Models[0].Pass1 != 1 {
		t.Fatalf("after a count changed: %v, pass@1 %v", err, e3.Report.Models[0].Pass1)
	}
	// So does new statistics, a renamed model and a status change.
	for what, q := range map[string]string{
		"statistics": `INSERT INTO comparison_stats (comparison_id, variant, hash, status) VALUES ($1, 'all', 'x', 'failed')`,
		"run":        `UPDATE runs SET model_name = 'base-renamed' WHERE comparison_id = $1 AND position = 0`,
	} {
		v0, _ := st.ReportVersion(ctx, id)
		if _, err := st.Pool().Exec(ctx, q, id); err != nil {
			t.Fatal(err)
		}
		if v1, _ := st.ReportVersion(ctx, id); v1 == v0 {
			t.Errorf("%s changed: report version still %s", what, v0)
		}
	}
	e4, err := cache.Get(ctx, id, analysis.Options{})
	if err != nil || e4.Report.Models[0].Name != "base-renamed" {
		t.Fatalf("after the rename: %v", err)
	}
	// Touching the statistics (still current) changes nothing.
	v0, _ := st.ReportVersion(ctx, id)
	if err := st.TouchStats(ctx, id, "all"); err != nil {
		t.Fatal(err)
	}
	if v1, _ := st.ReportVersion(ctx, id); v1 != v0 {
		t.Errorf("touching the statistics moved the report version %s -> %s", v0, v1)
	}
	// Derived artifacts are computed once per entry.
	calls := 0
	for range 3 {
		if _, err := e4.Memo("x", func() (any, error) { calls++; return calls, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 1 {
		t.Errorf("memo computed %d times", calls)
	}
	// Not ready: no report.
	if err := st.SetComparisonStatus(ctx, id, store.StatusVerifying, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.Get(ctx, id, analysis.Options{}); err == nil {
		t.Error("a report of a comparison being verified")
	}
}

// The cache is bounded by the reports' size as well as their number: with
// room for one report, asking for a second variant drops the first (the
// next Get reads it back from Postgres), and the report just asked for
// stays even when it alone is over the bound.
func TestCacheBoundedByBytes(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	id, _ := readyPair(t, st)
	cache := analysis.NewCache(st, 8)
	cache.SetMaxBytes(1)
	a, err := cache.Get(ctx, id, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Bytes <= 0 {
		t.Fatalf("entry of %d bytes", a.Bytes)
	}
	if again, err := cache.Get(ctx, id, analysis.Options{}); err != nil || again != a {
		t.Fatalf("the only report was not kept: %v", err)
	}
	if _, err := cache.Get(ctx, id, analysis.Options{Biased: true}); err != nil {
		t.Fatal(err)
	}
	back, err := cache.Get(ctx, id, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if back == a || !back.Stored {
		t.Errorf("over the bound the first report stayed in memory (same entry %v, stored %v)", back == a, back.Stored)
	}
	// Room for both: both stay.
	roomy := analysis.NewCache(st, 8)
	x, _ := roomy.Get(ctx, id, analysis.Options{})
	roomy.Get(ctx, id, analysis.Options{Biased: true})
	if y, _ := roomy.Get(ctx, id, analysis.Options{}); y != x {
		t.Error("with room for both, the first report was dropped")
	}
}

package jobs_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
)

// Issue 28, item 3: after an import with texts a job builds each run's
// trigram index; Postgres's plan reads it; a search through it finds the
// problems a plain scan (and Go's own substring check) finds; deleting the
// comparison drops the indexes.
func TestSearchIndexAfterImport(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	rep := e.importReady(t, intake.Spec{
		Name:    "humaneval",
		Dataset: intake.LocalFile(repoData(t, "humaneval/HumanEval.jsonl")),
		Models: []intake.Model{
			{Name: "mistral", File: intake.LocalFile(repoData(t, "humaneval/samples-mistral-vs-zephyr/mistral_samples.jsonl_results.jsonl"))},
			{Name: "zephyr", File: intake.LocalFile(repoData(t, "humaneval/samples-mistral-vs-zephyr/zephyr_samples.jsonl_results.jsonl"))},
		},
	})
	runs := []int64{rep.Models[0].RunID, rep.Models[1].RunID}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ready, err := e.st.SearchIndexedRuns(ctx, runs)
		if err != nil {
			t.Fatal(err)
		}
		if len(ready) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("search indexes of runs %v: %v after 2 minutes", runs, ready)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The planner reads the runs' own partial indexes for a query of
	// trigrams (the run ids literals in the query).
	plan, err := e.st.ExplainSearchIndexed(ctx, runs, "sorted(")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if !strings.Contains(plan, store.SearchIndexName(r)) {
			t.Errorf("plan does not use %s:\n%s", store.SearchIndexName(r), plan)
		}
	}

	// Statistics of the indexed expression would make a common query's
	// plan read every text (ANALYZE after the index: "return" estimated
	// in most texts, a sequential scan computing reach_search_text of
	// each; 5.0 s against 0.85 s on a 128,000-sample run of the lab). The
	// index keeps none, so the plan stays the index's whatever ANALYZE ran.
	if err := e.st.AnalyzeSamples(ctx, runs...); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		var n int
		if err := e.st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stats WHERE tablename = $1`, store.SearchIndexName(r)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d statistics rows after ANALYZE; want none", store.SearchIndexName(r), n)
		}
	}
	plan, err = e.st.ExplainSearchIndexed(ctx, runs, "return ")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if !strings.Contains(plan, store.SearchIndexName(r)) {
			t.Errorf("after ANALYZE, a common query's plan does not use %s:\n%s", store.SearchIndexName(r), plan)
		}
	}

	// The runs' windows, with which the page estimates a query's candidates.
	var ws []store.Windows
	for _, r := range runs {
		texts, err := e.st.SearchSampleTexts(ctx, r, 256)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, store.CountWindows(texts))
	}

	var pids []int64
	var counts [][]int
	texts := map[int64][]string{} // every completion of both runs, by problem
	for _, row := range rep.Rows {
		pids = append(pids, row.ProblemID)
		counts = append(counts, []int{row.Counts[0].N, row.Counts[1].N})
		for _, run := range runs {
			ss, err := e.st.SamplesForProblem(ctx, run, row.ProblemID, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range ss {
				texts[row.ProblemID] = append(texts[row.ProblemID], strings.ToLower(s.Completion))
			}
		}
	}
	if len(texts) != 164 {
		t.Fatalf("texts of %d problems; want 164", len(texts))
	}
	for _, q := range []string{"sorted(", "RETURN SUM", "is_prime", "% 2 == 0", "for i in range(len(", "zzzqqq"} {
		want := map[int64]bool{}
		for pid, ts := range texts {
			for _, s := range ts {
				if strings.Contains(s, strings.ToLower(q)) {
					want[pid] = true
					break
				}
			}
		}
		search := func(indexed map[int64]bool, ws []store.Windows) store.TextSearchResult {
			res, err := e.st.SearchTexts(ctx, store.TextSearch{Runs: runs, Indexed: indexed, Problems: pids, Counts: counts, Text: q, Budget: 1 << 30, Windows: ws})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Decided) != len(pids) {
				t.Errorf("%q: %d of %d problems decided", q, len(res.Decided), len(pids))
			}
			return res
		}
		scan, got := search(nil, nil), search(map[int64]bool{runs[0]: true, runs[1]: true}, nil)
		rare := search(map[int64]bool{runs[0]: true, runs[1]: true}, ws)
		if !maps.Equal(got.Hits, want) || !maps.Equal(scan.Hits, want) || !maps.Equal(rare.Hits, want) {
			t.Errorf("%q: index found %d problems (with windows %d), scan %d; Go's substring check %d", q, len(got.Hits), len(rare.Hits), len(scan.Hits), len(want))
		}
		t.Logf("%q: %d problems", q, len(want))
		if q == "sorted(" && len(want) < 5 {
			t.Errorf("%q found on %d problems: the check proves little", q, len(want))
		}
	}

	// Deleting the comparison drops its indexes (the job after the delete).
	if err := e.st.DeleteComparison(ctx, rep.ComparisonID); err != nil {
		t.Fatal(err)
	}
	if err := jobs.StartSearchIndex(ctx, e.client); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(time.Minute)
	for {
		var n int
		if err := e.st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname = ANY($1)`,
			[]string{store.SearchIndexName(runs[0]), store.SearchIndexName(runs[1])}).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d search indexes left a minute after the comparison was deleted", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

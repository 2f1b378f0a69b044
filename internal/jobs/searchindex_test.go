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

	// The planner reads the run's own partial index for a query of
	// trigrams (the run id a literal in the query).
	plan, err := e.st.ExplainSearchIndexed(ctx, runs[0], "sorted(")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, store.SearchIndexName(runs[0])) {
		t.Errorf("plan does not use %s:\n%s", store.SearchIndexName(runs[0]), plan)
	}

	var pids []int64
	texts := map[int64][]string{} // every completion of both runs, by problem
	for _, row := range rep.Rows {
		pids = append(pids, row.ProblemID)
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
		scan, err := e.st.SearchCompletions(ctx, runs, pids, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.st.SearchCompletionsIndexed(ctx, runs, q)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, want) || !maps.Equal(scan, want) {
			t.Errorf("%q: index found %d problems, scan %d; Go's substring check %d", q, len(got), len(scan), len(want))
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

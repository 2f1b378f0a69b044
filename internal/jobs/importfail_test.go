package jobs_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/benchdata"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// startClient starts a River client with its own pool on the database at
// dbURL, as one more process (`reach serve`, `reach import --wait`) would.
func startClient(t *testing.T, dbURL string, localQueue string) env {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	client, err := jobs.NewClient(st, jobs.Config{Workers: 4, Verifier: vmath.New(), LocalQueue: localQueue,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
		st.Close()
	})
	return env{st, client}
}

// holdInFlight orders the imports of a comparison with one bad file as a
// large good file's import meets the bad file's failure, whatever the
// speed of the machine: the bad file is read only once another file's
// import has stored its first batch, and that import is then held, its
// transaction open, until it is told to stop (its context ends) or
// another connection waits on its transaction. It reports how many
// imports it held.
func holdInFlight(t *testing.T, admin *store.Store, badFile string) func() int {
	t.Helper()
	var mu sync.Mutex
	held := 0
	inFlight := make(chan struct{})
	var once sync.Once
	// Bounded only so that a broken import fails the test instead of
	// hanging it; settled's deadline is far shorter.
	const patience = time.Minute
	jobs.SetImportHook(t, func(ctx context.Context, runID int64, tx *store.Store, stored int64) {
		var file string
		if err := admin.Pool().QueryRow(ctx, `SELECT source_file FROM runs WHERE id = $1`, runID).Scan(&file); err != nil {
			return
		}
		if file == badFile {
			if stored == 0 {
				select {
				case <-inFlight:
				case <-ctx.Done():
				case <-time.After(patience):
				}
			}
			return
		}
		if stored == 0 {
			return
		}
		mu.Lock()
		held++
		mu.Unlock()
		once.Do(func() { close(inFlight) })
		var pid int32
		if err := tx.Tx().QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			return
		}
		for end := time.Now().Add(patience); time.Now().Before(end); {
			var waited bool
			err := admin.Pool().QueryRow(context.WithoutCancel(ctx),
				`SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid)))`, pid).Scan(&waited)
			if err != nil || waited {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	return func() int { mu.Lock(); defer mu.Unlock(); return held }
}

// settled waits until the comparison failed and nothing of its import is
// left: no import job unfinished, no dataset, problem, sample, count or
// upload. It fails the test when that takes more than 30 seconds (a hang:
// a failure is recorded in well under a second).
func settled(t *testing.T, st *store.Store, id int64) store.Comparison {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	var left string
	for time.Now().Before(deadline) {
		c, err := st.GetComparison(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var jobsLeft, datasets, problems, samples, counts, uploads int
		err = st.Pool().QueryRow(ctx, `SELECT
			(SELECT count(*) FROM river_job WHERE state IN ('available', 'pending', 'running', 'retryable', 'scheduled')
				AND kind LIKE 'import%' AND (args->>'comparison_id')::bigint = $1),
			(SELECT count(*) FROM datasets), (SELECT count(*) FROM problems), (SELECT count(*) FROM samples),
			(SELECT count(*) FROM run_counts), (SELECT count(*) FROM uploads)`, id).
			Scan(&jobsLeft, &datasets, &problems, &samples, &counts, &uploads)
		if err != nil {
			t.Fatal(err)
		}
		left = fmt.Sprintf("status %s (%q), unfinished import jobs %d, datasets %d, problems %d, samples %d, counts %d, uploads %d",
			c.Status, c.Error, jobsLeft, datasets, problems, samples, counts, uploads)
		if c.Status == store.StatusFailed && jobsLeft+datasets+problems+samples+counts+uploads == 0 {
			if c.DatasetID != nil {
				t.Errorf("the failed comparison still names dataset %d", *c.DatasetID)
			}
			return c
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("comparison %d not failed with nothing kept after 30 s: %s", id, left)
	return store.Comparison{}
}

// writeLines writes the first n lines of src, then extra, to a new file.
func writeLines(t *testing.T, src, dst string, n int, extra string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var b strings.Builder
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<24)
	for i := 0; i < n && sc.Scan(); i++ {
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	b.WriteString(extra)
	if err := os.WriteFile(dst, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A bad file fails its comparison at once with file, line and field while
// a good file of the same comparison is still importing (its transaction
// open, rows stored), and nothing of either is kept: with the jobs worked
// by two processes on one database (`reach serve` and `reach import
// --wait`), for files read from the importing process's disk and for
// uploaded ones, counts CSVs and JSONL samples files. The good file's
// import is held open after its first batch until it is stopped or someone
// waits on it; before the fix the failure waited on it while it waited,
// through its progress write, on the failure: a hang Postgres cannot see.
func TestBadFileFailsBesideImportInFlight(t *testing.T) {
	st, dbURL := testdb.New(t)
	queue := jobs.NewLocalQueue()
	_ = startClient(t, dbURL, "")       // reach serve
	cli := startClient(t, dbURL, queue) // reach import --wait

	dir := t.TempDir()
	counts := repoData(t, "generations/math500-qwen25-7b-base-vs-simplerl-counts")
	goodCSV := filepath.Join(counts, "qwen2.5-7b-simplerl-zoo.csv")
	nanCSV := filepath.Join(dir, "nan.csv")
	writeLines(t, filepath.Join(counts, "qwen2.5-7b-base.csv"), nanCSV, 1, "test/precalculus/807.json,128,abc\n")
	files, err := benchdata.WriteFiles(filepath.Join(dir, "gen"), repoData(t, ""), benchdata.FileSpec{N: 8, RLN: 8, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	// 2,500 good samples (a first batch of 2,000 is stored), then a
	// problem the dataset does not have.
	badJSONL := filepath.Join(dir, "bad.jsonl")
	writeLines(t, files.Base, badJSONL, 2500,
		`{"problem_id":"test/nowhere/1.json","sample_index":0,"completion":"\\boxed{2}","correct":true}`+"\n")

	cases := []struct {
		name, dataset, good, bad string
		upload                   bool
		want                     []string // in the comparison's error
	}{
		{"counts csv, local files", repoData(t, "math500/test.jsonl"), goodCSV, nanCSV, false,
			[]string{"nan.csv:2", "correct", `"abc"`}},
		{"counts csv, uploaded files", repoData(t, "math500/test.jsonl"), goodCSV, nanCSV, true,
			[]string{"nan.csv:2", "correct", `"abc"`}},
		{"jsonl, local files", files.Dataset, files.RL, badJSONL, false,
			[]string{"bad.jsonl:2501", "problem id", "test/nowhere/1.json"}},
		{"jsonl, uploaded files", files.Dataset, files.RL, badJSONL, true,
			[]string{"bad.jsonl:2501", "problem id", "test/nowhere/1.json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			held := holdInFlight(t, st, filepath.Base(tc.bad))
			spec := intake.Spec{Name: tc.name, Dataset: intake.LocalFile(tc.dataset), Models: []intake.Model{
				{Name: "a", File: intake.LocalFile(tc.bad)}, {Name: "b", File: intake.LocalFile(tc.good)}}}
			var (
				id  int64
				err error
			)
			if tc.upload {
				id, _, err = intake.Create(ctx, cli.st, cli.client, spec)
			} else {
				id, _, err = intake.CreateLocal(ctx, cli.st, cli.client, spec, queue)
			}
			if err != nil {
				t.Fatal(err)
			}
			c := settled(t, st, id)
			for _, w := range tc.want {
				if !strings.Contains(c.Error, w) {
					t.Errorf("error %q does not name %s", c.Error, w)
				}
			}
			if held() == 0 {
				t.Errorf("the good file's import was never in flight when the bad one failed")
			}
			if !tc.upload {
				if err := intake.WaitImported(ctx, st, id); err == nil || !strings.Contains(err.Error(), tc.want[0]) {
					t.Errorf("WaitImported (what `reach import` prints): %v", err)
				}
			}
		})
	}
}

package jobs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/internal/testfiles"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// Issue 28, item 5: scaling out is more `reach worker` processes on the
// same Postgres. Three of them (the real binary) import the GSM8K
// SFT-vs-PPO pair in parts, re-verify it and sample it from two `reach
// replay-server` endpoints, together: every run ends with exactly n = 8
// samples of each of the 30 problems (none lost, none twice, none
// pending), and each worker completed some of the jobs (River's
// attempted_by names the client of each attempt).
func TestThreeWorkersShareWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three worker processes")
	}
	const (
		problems = 30
		n        = 8
	)
	bin := reachOnce(t)
	st, dbURL := testdb.New(t)
	box, _ := secret.New(testSecret)
	client, err := jobs.NewClient(st, jobs.Config{Verifier: vmath.New(), Secret: box})
	if err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(os.TempDir(), "reach-scaleout-test-logs")
	_ = os.RemoveAll(logDir)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &faultRig{t: t, bin: bin, dbURL: dbURL, st: st, client: client, box: box, logDir: logDir}
	workers := []*workerProc{r.start(), r.start(), r.start()}
	ctx := context.Background()

	dir := testfiles.GSM8KProbe(t)
	dataset := filepath.Join(dir, "data/gsm8k_subset.jsonl")
	var urls []string
	for _, f := range []string{"sft_raw.jsonl", "rl_raw.jsonl"} {
		urls = append(urls, replayServer(t, bin, "--samples", filepath.Join(dir, "results_1024_cuda", f), "--dataset", dataset, "--latency", "20ms"))
	}

	begin := time.Now()
	var ids []int64
	step := func(what string, id int64) {
		t.Helper()
		took, err := r.waitReady(id, 2*time.Minute)
		if err != nil {
			var logs []string
			for _, w := range workers {
				logs = append(logs, w.log+":\n"+w.tail(30))
			}
			t.Fatalf("%s: %v\n%s", what, err, strings.Join(logs, "\n"))
		}
		if bad := r.checkSamples(id, problems, n); len(bad) > 0 {
			t.Errorf("%s: %s", what, strings.Join(bad, "; "))
		}
		t.Logf("%s: ready in %v; %s", what, took.Round(time.Millisecond), r.jobsByWorker([]int64{id}))
		ids = append(ids, id)
	}
	id, _, err := intake.Create(ctx, st, client, gsm8kSpec(t, false))
	if err != nil {
		t.Fatal(err)
	}
	step("import", id)
	if err := jobs.StartReverify(ctx, client, st, vmath.New(), id, 0); err != nil {
		t.Fatal(err)
	}
	step("re-verification", id)
	spec := sampleSpec(t, urls[0], urls[1], n)
	sid, err := intake.CreateSampling(ctx, st, client, box, spec)
	if err != nil {
		t.Fatal(err)
	}
	step("sampling", sid)
	t.Logf("all three steps in %v", time.Since(begin).Round(time.Millisecond))

	// Each worker completed jobs of these comparisons.
	by := r.jobsByWorkerMap(ids)
	if len(by) != 3 {
		t.Errorf("jobs completed by %d workers, want 3: %v", len(by), by)
	}
}

// jobsByWorkerMap counts the completed River jobs of comparisons ids by
// the client (worker process) that ran their last attempt.
func (r *faultRig) jobsByWorkerMap(ids []int64) map[string]int {
	rows, err := r.st.Pool().Query(context.Background(), `SELECT attempted_by[array_length(attempted_by, 1)], count(*) FROM river_job
		WHERE state = 'completed' AND (args->>'comparison_id')::bigint = ANY($1) GROUP BY 1`, ids)
	if err != nil {
		r.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var who string
		var n int
		if err := rows.Scan(&who, &n); err != nil {
			r.t.Fatal(err)
		}
		out[who] = n
	}
	if err := rows.Err(); err != nil {
		r.t.Fatal(err)
	}
	return out
}

// jobsByWorker is jobsByWorkerMap, written out.
func (r *faultRig) jobsByWorker(ids []int64) string {
	var parts []string
	for who, n := range r.jobsByWorkerMap(ids) {
		parts = append(parts, fmt.Sprintf("%s: %d", who, n))
	}
	return "completed jobs by worker: " + strings.Join(parts, ", ")
}

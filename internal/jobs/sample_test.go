package jobs_test

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/replay"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/internal/testfiles"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

const testSecret = "reach-test-secret"

// replayPair serves the real GSM8K SFT and PPO rollouts as two
// OpenAI-compatible endpoints.
func replayPair(t *testing.T, opts replay.Options) (sftURL, ppoURL string) {
	t.Helper()
	dir := testfiles.GSM8KProbe(t)
	var urls []string
	for _, f := range []string{"sft_raw.jsonl", "rl_raw.jsonl"} {
		recs, err := replay.Load(context.Background(), filepath.Join(dir, "results_1024_cuda", f), filepath.Join(dir, "data/gsm8k_subset.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(replay.New(recs, opts))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL+"/v1")
	}
	return urls[0], urls[1]
}

func sampleSpec(t *testing.T, sftURL, ppoURL string, n int) intake.SampleSpec {
	dir := testfiles.GSM8KProbe(t)
	cfg := jobs.DefaultSamplingConfig()
	cfg.N, cfg.Template = n, "gsm8k"
	return intake.SampleSpec{
		Name:    "gsm8k sampled",
		Dataset: intake.LocalFile(filepath.Join(dir, "data/gsm8k_subset.jsonl")),
		Models: []intake.EndpointModel{
			{Name: "SFT", BaseURL: sftURL, Model: "sft", APIKey: "sk-test-1", MaxConcurrency: 8},
			{Name: "PPO", BaseURL: ppoURL, Model: "ppo", MaxConcurrency: 8},
		},
		Config:    cfg,
		AutoStart: true,
	}
}

func startSampling(t *testing.T) (env, *secret.Box) {
	t.Helper()
	return startSamplingDownAfter(t, 0)
}

// counts maps problem key -> (n, c) for each model of a report.
func counts(rep *analysis.Report) []map[string][2]int {
	var out []map[string][2]int
	for _, m := range rep.Models {
		cm := map[string][2]int{}
		for _, c := range m.Counts.All() {
			cm[c.ProblemID] = [2]int{c.N, c.C}
		}
		out = append(out, cm)
	}
	return out
}

// Sampling the real GSM8K pair through two replay endpoints, with 20% of
// requests answered 429 or 500, gives exactly the per-problem counts that
// importing the same files and re-verifying them with Reach's verifier gives.
func TestSampledEqualsImportedAndReverified(t *testing.T) { testSampledEqualsImportedAndReverified(t) }

// TestSampledEqualsImportedAndReverifiedUnlicensed is TestSampledEqualsImportedAndReverified on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestSampledEqualsImportedAndReverified runs on the stand-in.
func TestSampledEqualsImportedAndReverifiedUnlicensed(t *testing.T) {
	testSampledEqualsImportedAndReverified(t)
}

func testSampledEqualsImportedAndReverified(t *testing.T) {
	e, box := startSampling(t)
	ctx := context.Background()
	sft, ppo := replayPair(t, replay.Options{Latency: 5 * time.Millisecond, ErrorRate: 0.2, Seed: 7})
	counted := metricsSnapshot(t)
	id, err := intake.CreateSampling(ctx, e.st, e.client, box, sampleSpec(t, sft, ppo, 8))
	if err != nil {
		t.Fatal(err)
	}
	if c := e.wait(t, id); c.Status != store.StatusReady {
		t.Fatalf("sampled comparison %s: %s", c.Status, c.Error)
	}
	waitMetric(t, counted, "reach_samples_sampled_total", 2*30*8)
	waitMetric(t, counted, "reach_samples_verified_total", 2*30*8) // graded as they arrive
	sampled, err := analysis.Build(ctx, e.st, id)
	if err != nil {
		t.Fatal(err)
	}
	imported := e.importReady(t, gsm8kSpec(t, true))
	if sampled.Problems != 30 || sampled.KMax != 8 {
		t.Fatalf("sampled: %d problems, k max %d; want 30, 8", sampled.Problems, sampled.KMax)
	}
	sc, ic := counts(sampled), counts(imported)
	for i := range sc {
		if !maps.Equal(sc[i], ic[i]) {
			t.Errorf("model %s: sampled counts differ from imported+re-verified counts", sampled.Models[i].Name)
		}
	}
	c, _ := e.st.GetComparison(ctx, id)
	for _, r := range c.Runs {
		if r.Usage.Requests < 30 || r.Usage.TokensOut == 0 {
			t.Errorf("run %s usage %+v: want >= 30 requests and tokens counted", r.ModelName, r.Usage)
		}
		if string(r.Endpoint.APIKeyEnc) == "sk-test-1" {
			t.Error("API key stored in clear")
		}
	}
	if ppoRun := c.Runs[1]; len(ppoRun.Usage.Errors) == 0 {
		t.Errorf("20%% injected errors but no errors recorded: %+v", ppoRun.Usage)
	}
	// The process's endpoint metrics count the same failed attempts, by
	// kind, as the runs' usage, and at least one request per recorded one.
	now := metricsSnapshot(t)
	var requests int64
	errs := map[string]int64{}
	for _, r := range c.Runs {
		requests += r.Usage.Requests
		for k, n := range r.Usage.Errors {
			errs[k] += n
		}
	}
	for k, n := range errs {
		series := `reach_endpoint_errors_total{call="completion",kind="` + k + `"}`
		if got := now[series] - counted[series]; got != float64(n) {
			t.Errorf("%s went up by %v; the runs recorded %d", series, got, n)
		}
	}
	series := `reach_endpoint_requests_total{call="completion"}`
	if got := now[series] - counted[series]; got < float64(requests) {
		t.Errorf("%s went up by %v; the runs recorded %d requests", series, got, requests)
	}
}

// Raising n draws only the missing samples and the curve grows to the new k.
func TestExtendN(t *testing.T) { testExtendN(t) }

// TestExtendNUnlicensed is TestExtendN on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestExtendN runs on the stand-in.
func TestExtendNUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testExtendN(t)
}

func testExtendN(t *testing.T) {
	e, box := startSampling(t)
	ctx := context.Background()
	sft, ppo := replayPair(t, replay.Options{})
	spec := sampleSpec(t, sft, ppo, 4)
	id, err := intake.CreateSampling(ctx, e.st, e.client, box, spec)
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, id)
	err = e.st.WithTx(ctx, func(tx *store.Store) error {
		cfg := spec.Config
		cfg.N = 8
		if err := tx.SetSamplingConfig(ctx, id, cfg); err != nil {
			return err
		}
		c, err := tx.GetComparison(ctx, id)
		if err != nil {
			return err
		}
		return jobs.StartSampling(ctx, e.client, tx, c)
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if c := e.wait(t, id); c.Status != store.StatusReady {
		t.Fatalf("extended comparison %s: %s", c.Status, c.Error)
	}
	rep, err := analysis.Build(ctx, e.st, id)
	if err != nil {
		t.Fatal(err)
	}
	if rep.KMax != 8 {
		t.Fatalf("k max %d after extending to n = 8", rep.KMax)
	}
	// The replay server cycles through 8 recordings in order: had the first
	// 4 been drawn again, samples 4-7 would repeat texts 0-3 and the counts
	// would differ from the recorded ones.
	imported := e.importReady(t, gsm8kSpec(t, true))
	sc, ic := counts(rep), counts(imported)
	for i := range sc {
		if !maps.Equal(sc[i], ic[i]) {
			t.Errorf("model %s: counts after extending differ from the recorded files'", rep.Models[i].Name)
		}
	}
}

// buildReach compiles the reach binary for the fault test.
func buildReach(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	bin := filepath.Join(t.TempDir(), "reach")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/reach")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build reach: %v\n%s", err, out)
	}
	return bin
}

// A worker process killed with SIGKILL mid-sampling loses no finished
// sample and draws no duplicate: after a restart the run completes with
// exactly n samples per problem.
func TestWorkerKilledMidSampling(t *testing.T) { testWorkerKilledMidSampling(t) }

// TestWorkerKilledMidSamplingUnlicensed is TestWorkerKilledMidSampling on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestWorkerKilledMidSampling runs on the stand-in.
func TestWorkerKilledMidSamplingUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testWorkerKilledMidSampling(t)
}

func testWorkerKilledMidSampling(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills a worker process")
	}
	bin := buildReach(t)
	st, dbURL := testdb.New(t)
	box, _ := secret.New(testSecret)
	insertOnly, err := jobs.NewClient(st, jobs.Config{Verifier: vmath.New(), Secret: box})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sft, ppo := replayPair(t, replay.Options{Latency: 150 * time.Millisecond})
	spec := sampleSpec(t, sft, ppo, 16)
	spec.Models[0].MaxConcurrency, spec.Models[1].MaxConcurrency = 2, 2
	for i := range spec.Models {
		spec.Models[i].APIKey = ""
	}
	spec.Config.Temperature = 1
	id, err := intake.CreateSampling(ctx, st, insertOnly, box, spec)
	if err != nil {
		t.Fatal(err)
	}
	worker := func() *exec.Cmd {
		cmd := exec.Command(bin, "worker", "--database-url", dbURL, "--workers", "4")
		cmd.Env = append(os.Environ(), "REACH_SECRET="+testSecret, "REACH_JOB_TIMEOUT=4s", "REACH_RESCUE_AFTER=5s", "REACH_SAMPLING_WORKERS=8", "REACH_LOG_LEVEL=error")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	total := func() int64 {
		var n int64
		ps, err := st.SamplingProgressFor(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			n += p.Samples
		}
		return n
	}
	w1 := worker()
	deadline := time.Now().Add(time.Minute)
	for total() < 200 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	before := total()
	if err := w1.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = w1.Wait()
	if before < 200 || before >= 960 {
		t.Fatalf("killed the worker at %d of 960 samples; want mid-sampling", before)
	}
	if after := total(); after < before {
		t.Fatalf("samples went from %d to %d after the kill", before, after)
	}
	w2 := worker()
	t.Cleanup(func() { _ = w2.Process.Signal(syscall.SIGTERM); _ = w2.Wait() })
	env{st: st}.waitFor(t, id, 90*time.Second)
	c, _ := st.GetComparison(ctx, id)
	for _, r := range c.Runs {
		var n, distinct int64
		err := st.Pool().QueryRow(ctx, `SELECT count(*), count(DISTINCT (problem_id, sample_index)) FROM samples WHERE run_id = $1`, r.ID).Scan(&n, &distinct)
		if err != nil {
			t.Fatal(err)
		}
		if n != 30*16 || distinct != n {
			t.Errorf("run %s: %d samples (%d distinct); want exactly %d", r.ModelName, n, distinct, 30*16)
		}
		var bad int
		err = st.Pool().QueryRow(ctx, `SELECT count(*) FROM (SELECT problem_id FROM samples WHERE run_id = $1 GROUP BY problem_id
			HAVING count(*) <> 16 OR min(sample_index) <> 0 OR max(sample_index) <> 15) x`, r.ID).Scan(&bad)
		if err != nil || bad != 0 {
			t.Errorf("run %s: %d problems without exactly indices 0..15 (err %v)", r.ModelName, bad, err)
		}
	}
	fmt.Fprintf(os.Stderr, "killed the worker at %d samples; the restarted worker finished the rest\n", before)
}

func (e env) waitFor(t *testing.T, id int64, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		c, err := e.st.GetComparison(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if c.Status == store.StatusReady || c.Status == store.StatusFailed {
			if c.Status == store.StatusFailed {
				t.Fatalf("comparison failed: %s", c.Error)
			}
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	rows, _ := e.st.Pool().Query(context.Background(), `SELECT kind, state, count(*), max(attempt) FROM river_job GROUP BY 1, 2`)
	for rows.Next() {
		var kind, state string
		var n, att int
		_ = rows.Scan(&kind, &state, &n, &att)
		t.Logf("river jobs: %s %s: %d (max attempt %d)", kind, state, n, att)
	}
	rows.Close()
	t.Fatalf("comparison %d not ready after %v", id, d)
}

// Pause stops sampling at once, Resume draws the rest,
// Cancel reports on what was sampled, dropping unfinished problems.
func TestPauseResumeCancel(t *testing.T) { testPauseResumeCancel(t) }

// TestPauseResumeCancelUnlicensed is TestPauseResumeCancel on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestPauseResumeCancel runs on the stand-in.
func TestPauseResumeCancelUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testPauseResumeCancel(t)
}

func testPauseResumeCancel(t *testing.T) {
	e, box := startSampling(t)
	ctx := context.Background()
	sft, ppo := replayPair(t, replay.Options{Latency: 100 * time.Millisecond})
	samples := func(id int64) int64 {
		ps, err := e.st.SamplingProgressFor(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, p := range ps {
			n += p.Samples
		}
		return n
	}
	waitSamples := func(id int64, atLeast int64) {
		deadline := time.Now().Add(time.Minute)
		for samples(id) < atLeast {
			if time.Now().After(deadline) {
				t.Fatalf("fewer than %d samples after a minute", atLeast)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	newSpec := func() intake.SampleSpec {
		spec := sampleSpec(t, sft, ppo, 4)
		spec.Config.PerRequest = 1
		spec.Models[0].MaxConcurrency, spec.Models[1].MaxConcurrency = 2, 2
		return spec
	}

	id, err := intake.CreateSampling(ctx, e.st, e.client, box, newSpec())
	if err != nil {
		t.Fatal(err)
	}
	waitSamples(id, 20)
	if err := jobs.PauseSampling(ctx, e.client, e.st, id); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // River cancels the running jobs' requests
	paused := samples(id)
	time.Sleep(time.Second)
	if now := samples(id); now != paused || now >= 240 {
		t.Fatalf("paused at %d samples, then %d a second later (of 240)", paused, now)
	}
	if err := jobs.ResumeSampling(ctx, e.client, e.st, id); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, id, time.Minute)
	if n := samples(id); n != 240 {
		t.Fatalf("%d samples after resuming; want 240", n)
	}

	id2, err := intake.CreateSampling(ctx, e.st, e.client, box, newSpec())
	if err != nil {
		t.Fatal(err)
	}
	// Cancel once both models have finished some problems (jobs run in
	// order, the base model's first).
	deadline := time.Now().Add(time.Minute)
	for {
		ps, err := e.st.SamplingProgressFor(ctx, id2)
		if err != nil {
			t.Fatal(err)
		}
		low := int64(1 << 30)
		for _, p := range ps {
			low = min(low, p.Samples)
		}
		if len(ps) == 2 && low >= 12 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the models did not reach 12 samples each")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := jobs.CancelSampling(ctx, e.client, e.st, id2); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, id2, time.Minute)
	rep, err := analysis.Build(ctx, e.st, id2)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Problems == 0 || rep.Problems >= 30 || rep.Dropped != 30-rep.Problems {
		t.Fatalf("cancelled comparison reports %d problems (%d dropped); want some but not all 30", rep.Problems, rep.Dropped)
	}
	for _, m := range rep.Models {
		for _, c := range m.Counts.All() {
			if c.N != 4 {
				t.Fatalf("%s: problem %s has n = %d in a cancelled comparison; only complete problems count", m.Name, c.ProblemID, c.N)
			}
		}
	}
}

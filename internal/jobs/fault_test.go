package jobs_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/internal/testfiles"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// faultLease are the lease settings of the killed workers: short, so that
// a trial recovers in seconds; the renewal still has several chances
// before a lease goes stale, as with the defaults.
// REACH_STUCK_AFTER: a re-verification enqueued while a killed worker's
// job with the same arguments is still "running" (not yet reaped) is
// dropped by River as a duplicate; the comparison then waits for the
// stuck-comparison repair (2 minutes by default), here shortened.
var faultLease = []string{"REACH_LEASE_DELAY=1s", "REACH_LEASE_RENEW=1s", "REACH_LEASE_TTL=5s", "REACH_REAP_EVERY=2s", "REACH_STUCK_AFTER=20s"}

// workerProc is one `reach worker` child process and its log file.
type workerProc struct {
	cmd *exec.Cmd
	log string
}

// faultRig runs the fault test's worker processes on one database.
type faultRig struct {
	t      *testing.T
	bin    string
	dbURL  string
	st     *store.Store
	client *jobs.Client // insert-only: the test enqueues, the child workers work
	box    *secret.Box
	logDir string
	n      int // workers started so far
}

// start runs a new worker and waits until its River client is started.
func (r *faultRig) start() *workerProc {
	t := r.t
	t.Helper()
	r.n++
	log := filepath.Join(r.logDir, fmt.Sprintf("worker-%02d.log", r.n))
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(r.bin, "worker", "--database-url", r.dbURL, "--workers", "4")
	// Chunks of about 40 KB split each import into about ten chunk jobs
	// (the import trials kill workers in the middle of a split import).
	cmd.Env = append(os.Environ(), append([]string{"REACH_SECRET=" + testSecret, "REACH_SAMPLING_WORKERS=8", "REACH_LOG_LEVEL=info",
		"REACH_IMPORT_CHUNK_MB=0.04"}, faultLease...)...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &workerProc{cmd: cmd, log: log}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(time.Minute)
	for {
		b, _ := os.ReadFile(log)
		if strings.Contains(string(b), "worker started") {
			return w
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("worker %d did not start:\n%s", r.n, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill sends SIGKILL and reaps the process.
func (w *workerProc) kill(t *testing.T) {
	t.Helper()
	if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = w.cmd.Wait()
}

// tail returns the last n lines of the worker's log.
func (w *workerProc) tail(n int) string {
	f, err := os.Open(w.log)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitReady waits until comparison id is ready, at most d. It returns how
// long that took, or an error saying where the comparison stopped.
func (r *faultRig) waitReady(id int64, d time.Duration) (time.Duration, error) {
	ctx := context.Background()
	start := time.Now()
	for {
		c, err := r.st.GetComparison(ctx, id)
		if err != nil {
			return 0, err
		}
		switch c.Status {
		case store.StatusReady:
			return time.Since(start), nil
		case store.StatusFailed:
			return 0, fmt.Errorf("comparison %d failed: %s", id, c.Error)
		}
		if time.Since(start) > d {
			return 0, fmt.Errorf("comparison %d still %s after %v; %s", id, c.Status, d, r.jobStates(id))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// jobStates describes the River jobs of comparison id.
func (r *faultRig) jobStates(id int64) string {
	rows, err := r.st.Pool().Query(context.Background(), `SELECT kind, state, count(*), max(attempt), bool_or(metadata ? 'cancel_attempted_at'),
			COALESCE(string_agg(DISTINCT errors[array_length(errors, 1)]->>'error', '; '), '')
		FROM river_job WHERE (args->>'comparison_id')::bigint = $1 GROUP BY 1, 2 ORDER BY 1, 2`, id)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var kind, state string
		var n, att int
		var cancelled bool
		var lastErr string
		if err := rows.Scan(&kind, &state, &n, &att, &cancelled, &lastErr); err != nil {
			return err.Error()
		}
		s := fmt.Sprintf("%s %s ×%d (attempt ≤%d)", kind, state, n, att)
		if lastErr != "" {
			s += fmt.Sprintf(" [last error: %.200s]", lastErr)
		}
		if cancelled {
			s += " cancel-attempted"
		}
		out = append(out, s)
	}
	return "jobs: " + strings.Join(out, ", ")
}

// running names the comparison's jobs River holds as running.
func (r *faultRig) running(id int64) string {
	rows, err := r.st.Pool().Query(context.Background(), `SELECT kind FROM river_job
		WHERE state = 'running' AND (args->>'comparison_id')::bigint = $1 ORDER BY id`, id)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	kinds := map[string]int{}
	var order []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return err.Error()
		}
		if kinds[k] == 0 {
			order = append(order, k)
		}
		kinds[k]++
	}
	if len(order) == 0 {
		return "no job running"
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s×%d", k, kinds[k]))
	}
	return strings.Join(parts, " ")
}

// headline is a comparison's pass@k curve of every model (every k, exact).
func (r *faultRig) headline(id int64) (string, error) {
	rep, err := analysis.Build(context.Background(), r.st, id)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, m := range rep.Models {
		fmt.Fprintf(&b, "%s: pass@1 %.6f pass@%d %.6f solved %d; curve", m.Name, m.Pass1, rep.KMax, m.PassN, m.Solved)
		for _, p := range m.PassAtK {
			fmt.Fprintf(&b, " %g", p.Value)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// checkSamples says what is wrong with comparison id's samples and counts:
// every run must hold exactly indices 0..n-1 of each of its problems, no
// sample pending, and counts with n for every problem.
func (r *faultRig) checkSamples(id int64, problems, n int) []string {
	ctx := context.Background()
	c, err := r.st.GetComparison(ctx, id)
	if err != nil {
		return []string{err.Error()}
	}
	var bad []string
	for _, run := range c.Runs {
		var total, distinct, pending, probs, wrong int
		err := r.st.Pool().QueryRow(ctx, `SELECT count(*), count(DISTINCT (problem_id, sample_index)),
				count(*) FILTER (WHERE status = 'pending'), count(DISTINCT problem_id) FROM samples WHERE run_id = $1`, run.ID).
			Scan(&total, &distinct, &pending, &probs)
		if err != nil {
			return append(bad, err.Error())
		}
		err = r.st.Pool().QueryRow(ctx, `SELECT count(*) FROM (SELECT problem_id FROM samples WHERE run_id = $1 GROUP BY problem_id
				HAVING count(*) <> $2 OR count(DISTINCT sample_index) <> $2 OR min(sample_index) <> 0 OR max(sample_index) <> $2 - 1) x`, run.ID, n).
			Scan(&wrong)
		if err != nil {
			return append(bad, err.Error())
		}
		if total != problems*n || distinct != total || pending != 0 || probs != problems || wrong != 0 {
			bad = append(bad, fmt.Sprintf("run %s: %d samples (%d distinct, %d pending) over %d problems, %d problems without exactly indices 0..%d; want %d×%d",
				run.ModelName, total, distinct, pending, probs, wrong, n-1, problems, n))
		}
		var counted, wrongN int
		err = r.st.Pool().QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE n <> $2) FROM run_counts WHERE run_id = $1`, run.ID, n).
			Scan(&counted, &wrongN)
		if err != nil {
			return append(bad, err.Error())
		}
		if counted != problems || wrongN != 0 {
			bad = append(bad, fmt.Sprintf("run %s: counts for %d problems, %d with n ≠ %d; want %d", run.ModelName, counted, wrongN, n, problems))
		}
	}
	return bad
}

// faultResult is one trial: its kind, when the worker was killed after the
// work was enqueued, which jobs of it were running then, and how long after
// the restart the comparison was ready.
type faultResult struct {
	kind     string
	at       time.Duration
	running  string
	recovery time.Duration
}

// TestKilledWorkersRecover kills a `reach worker` process with SIGKILL 20
// times at random points of an import of the real GSM8K SFT-vs-PPO pair, of
// a re-verification of it, and of sampling it from two `reach
// replay-server` endpoints (7, 7 and 6 trials). After each kill a new
// worker starts; the comparison must be ready within 2 minutes of that
// restart with exactly n = 8 samples of each of the 30 problems per model
// (no loss, no duplicate, none left pending) and the same pass@k curves as
// an undisturbed run of the same work.
//
// A killed worker was River's leader, whose leadership outlives it by up
// to 15 s, and the reaper runs on the leader: each trial waits that long.
// So the trials run in two lanes at once, each with its own database and
// workers, 10 trials each.
//
// The kill points are drawn from a seeded generator: the log names the
// seed, and REACH_FAULT_SEED=<seed> replays the same offsets. Each
// worker's log is kept in $TMPDIR/reach-fault-test-logs/lane-N.
func TestKilledWorkersRecover(t *testing.T) { testKilledWorkersRecover(t) }

// TestKilledWorkersRecoverUnlicensed is TestKilledWorkersRecover on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestKilledWorkersRecover runs on the stand-in.
func TestKilledWorkersRecoverUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testKilledWorkersRecover(t)
}

func testKilledWorkersRecover(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills worker processes")
	}
	const (
		trials = 20
		lanes  = 2
	)
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("REACH_FAULT_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("REACH_FAULT_SEED=%q: %v", v, err)
		}
		seed = s
	}
	t.Logf("seed %d (REACH_FAULT_SEED=%d replays these kill points)", seed, seed)
	bin := reachOnce(t)
	logDir := filepath.Join(os.TempDir(), "reach-fault-test-logs")
	_ = os.RemoveAll(logDir)

	// The sampled endpoints replay the pair's recorded completions. With
	// n = 8 = the recordings per problem and one request per problem and
	// model, every request (also one answered to a worker that died
	// before storing it) takes all 8, so a re-asked chunk gets the same
	// texts and an undisturbed run's curves are the expected ones.
	dir := testfiles.GSM8KProbe(t)
	dataset := filepath.Join(dir, "data/gsm8k_subset.jsonl")
	var urls []string
	for _, f := range []string{"sft_raw.jsonl", "rl_raw.jsonl"} {
		urls = append(urls, replayServer(t, bin, "--samples", filepath.Join(dir, "results_1024_cuda", f), "--dataset", dataset, "--latency", "80ms"))
	}

	order := []string{"import", "verify", "sample"}
	var mu sync.Mutex
	var results []faultResult
	t.Cleanup(func() {
		slowest := map[string]time.Duration{}
		count := map[string]int{}
		for _, res := range results {
			count[res.kind]++
			slowest[res.kind] = max(slowest[res.kind], res.recovery)
		}
		for _, kind := range order {
			t.Logf("%s: %d trials recovered, slowest %v after the restart", kind, count[kind], slowest[kind].Round(100*time.Millisecond))
		}
	})
	for lane := range lanes {
		var kinds []string
		for i := lane; i < trials; i += lanes {
			kinds = append(kinds, order[i%len(order)])
		}
		t.Run(fmt.Sprintf("lane-%d", lane), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, uint64(lane)))
			res := faultLane(t, bin, filepath.Join(logDir, fmt.Sprintf("lane-%d", lane)), urls, kinds, rng)
			mu.Lock()
			results = append(results, res...)
			mu.Unlock()
		})
	}
}

// faultLane runs the trials of kinds on a database of its own, killing
// its worker at points drawn from rng.
func faultLane(t *testing.T, bin, logDir string, urls, kinds []string, rng *rand.Rand) []faultResult {
	const (
		problems = 30
		n        = 8
		recovery = 2 * time.Minute
	)
	st, dbURL := testdb.New(t)
	box, _ := secret.New(testSecret)
	client, err := jobs.NewClient(st, jobs.Config{Verifier: vmath.New(), Secret: box})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &faultRig{t: t, bin: bin, dbURL: dbURL, st: st, client: client, box: box, logDir: logDir}
	ctx := context.Background()

	// Each kind of work: start it, returning the comparison to wait for.
	var verifyID int64
	start := map[string]func() int64{
		"import": func() int64 {
			id, _, err := intake.Create(ctx, st, client, gsm8kSpec(t, false))
			if err != nil {
				t.Fatal(err)
			}
			return id
		},
		"verify": func() int64 {
			if err := jobs.StartReverify(ctx, client, st, vmath.New(), verifyID, 0); err != nil {
				t.Fatal(err)
			}
			return verifyID
		},
		"sample": func() int64 {
			spec := sampleSpec(t, urls[0], urls[1], n)
			spec.Models[0].MaxConcurrency, spec.Models[1].MaxConcurrency = 2, 2
			id, err := intake.CreateSampling(ctx, st, client, box, spec)
			if err != nil {
				t.Fatal(err)
			}
			return id
		},
	}

	// Undisturbed runs: the expected curves and how long each kind of work
	// takes once enqueued (the kill points are drawn within that time).
	w := r.start()
	want := map[string]string{}
	took := map[string]time.Duration{}
	for _, kind := range []string{"import", "verify", "sample"} {
		id := start[kind]()
		begin := time.Now() // the work is enqueued
		if _, err := r.waitReady(id, recovery); err != nil {
			t.Fatalf("undisturbed %s: %v\n%s", kind, err, w.tail(40))
		}
		took[kind] = time.Since(begin)
		if bad := r.checkSamples(id, problems, n); len(bad) > 0 {
			t.Fatalf("undisturbed %s: %s", kind, strings.Join(bad, "; "))
		}
		if want[kind], err = r.headline(id); err != nil {
			t.Fatal(err)
		}
		if kind == "import" {
			verifyID = id // re-verified by every verify trial
		}
		t.Logf("undisturbed %s: %v\n%s", kind, took[kind].Round(time.Millisecond), want[kind])
	}

	var results []faultResult
	for i, kind := range kinds {
		at := time.Duration(rng.Float64() * float64(took[kind]))
		id := start[kind]()
		time.Sleep(at)
		w.kill(t)
		running := r.running(id) // as the dead worker left them
		restart := time.Now()
		old := w
		w = r.start()
		_, err := r.waitReady(id, recovery-time.Since(restart))
		res := faultResult{kind: kind, at: at, running: running, recovery: time.Since(restart)}
		t.Logf("trial %2d %-6s killed %v after the enqueue (%s), ready %v after the restart",
			i+1, kind, at.Round(time.Millisecond), running, res.recovery.Round(100*time.Millisecond))
		if err != nil {
			t.Fatalf("trial %d (%s, killed at %v during %s): %v\nkilled worker (%s):\n%s\nnew worker (%s):\n%s",
				i+1, kind, at, running, err, old.log, old.tail(40), w.log, w.tail(60))
		}
		if bad := r.checkSamples(id, problems, n); len(bad) > 0 {
			t.Errorf("trial %d (%s, killed at %v during %s): %s", i+1, kind, at, running, strings.Join(bad, "; "))
		}
		got, err := r.headline(id)
		if err != nil {
			t.Fatal(err)
		}
		if got != want[kind] {
			t.Errorf("trial %d (%s, killed at %v during %s): curves\n%s want (undisturbed)\n%s", i+1, kind, at, running, got, want[kind])
		}
		results = append(results, res)
	}
	return results
}

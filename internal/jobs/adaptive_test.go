package jobs_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/replay"
	"github.com/reach-lab/reach/internal/store"
)

// countsRecording writes, into dir, a samples file with per problem of a
// counts CSV (problem_id,n,correct) c completions ending in the dataset's
// reference answer boxed and n − c ending in a wrong one, in an order
// shuffled per problem with a seeded generator, so that the first m a replay
// server hands out are a fair sample without replacement of the n. It
// returns the file and the counts by problem key.
func countsRecording(t testing.TB, dir, countsFile, dataset string) (string, map[string]passk.Count) {
	t.Helper()
	refs := map[string]string{}
	f, err := os.Open(dataset)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := ingest.ReadDataset(f, filepath.Base(dataset), func(p ingest.Problem) error {
		refs[p.Key] = p.Reference
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cf, err := os.Open(countsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	rows, err := csv.NewReader(cf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(countsFile), ".csv")+".jsonl")
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	enc := json.NewEncoder(w)
	counts := map[string]passk.Count{}
	for _, row := range rows[1:] {
		key := row[0]
		n, err1 := strconv.Atoi(row[1])
		c, err2 := strconv.Atoi(row[2])
		ref, ok := refs[key]
		if err := errors.Join(err1, err2); err != nil || !ok {
			t.Fatalf("%s: row %q: %v (in the dataset: %v)", countsFile, row, err, ok)
		}
		counts[key] = passk.Count{N: n, C: c}
		texts := make([]string, n)
		for i := range texts {
			answer := ref
			if i >= c {
				answer = "-987654321" // no MATH500 answer is equivalent to it
			}
			texts[i] = fmt.Sprintf("Working through problem %s, attempt %d.\nThe final answer is $\\boxed{%s}$.", key, i+1, answer)
		}
		h := fnv.New64a()
		h.Write([]byte(key))
		rng := rand.New(rand.NewPCG(20260424, h.Sum64()))
		rng.Shuffle(len(texts), func(i, j int) { texts[i], texts[j] = texts[j], texts[i] })
		if err := enc.Encode(map[string]any{"problem_id": key, "completions": texts}); err != nil {
			t.Fatal(err)
		}
	}
	return out, counts
}

// countsServer serves countsRecording's file of countsFile on MATH500 as
// an OpenAI-compatible endpoint and returns its base URL.
func countsServer(t testing.TB, countsFile string, opts replay.Options) (string, map[string]passk.Count) {
	t.Helper()
	ds := examplesData("math500.jsonl")
	path, counts := countsRecording(t, t.TempDir(), examplesData(countsFile), ds)
	recs, finish, err := replay.LoadRecordings(context.Background(), path, ds)
	if err != nil {
		t.Fatal(err)
	}
	opts.FinishReasons = finish
	srv := httptest.NewServer(replay.New(recs, opts))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", counts
}

// adaptiveSpec is `reach sample --dataset math500.jsonl --base base=URL#base
// --model rl=URL#rl --n N --adaptive --budget B --seed 7` with the CLI's
// defaults otherwise.
func adaptiveSpec(t testing.TB, baseURL, rlURL string, n, budget, conc int) intake.SampleSpec {
	cfg := jobs.DefaultSamplingConfig()
	seed := int64(7)
	cfg.N, cfg.Adaptive, cfg.Budget, cfg.Seed, cfg.PerRequest = n, true, budget, &seed, jobs.DefaultPerRequest
	if tp, err := cfg.TemplateFor(); err == nil {
		cfg.Stop = tp.Stop
	}
	return intake.SampleSpec{
		Name:    fmt.Sprintf("MATH500 adaptive, n = %d, budget %d", n, budget),
		Dataset: intake.LocalFile(examplesData("math500.jsonl")),
		Models: []intake.EndpointModel{
			{Name: "Qwen2.5-7B", Role: "base", BaseURL: baseURL, Model: "base", Style: "completions", MaxConcurrency: conc},
			{Name: "SimpleRL-Zoo", Role: "rl", BaseURL: rlURL, Model: "rl", Style: "completions", MaxConcurrency: conc},
		},
		Config:    cfg,
		AutoStart: true,
	}
}

// cellStats returns, per run position and problem id, the samples stored,
// their distinct indices, the largest index + 1 and the correct ones.
type cellStat struct{ n, distinct, extent, correct int }

func cellStats(t *testing.T, st *store.Store, c store.Comparison) []map[int64]cellStat {
	t.Helper()
	out := make([]map[int64]cellStat, len(c.Runs))
	for m, r := range c.Runs {
		rows, err := st.Pool().Query(context.Background(), `SELECT problem_id, count(*), count(DISTINCT sample_index),
				max(sample_index) + 1, count(*) FILTER (WHERE status = 'correct')
			FROM samples WHERE run_id = $1 GROUP BY problem_id`, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		out[m] = map[int64]cellStat{}
		for rows.Next() {
			var pid int64
			var s cellStat
			if err := rows.Scan(&pid, &s.n, &s.distinct, &s.extent, &s.correct); err != nil {
				t.Fatal(err)
			}
			out[m][pid] = s
		}
		rows.Close()
	}
	return out
}

func drawnSamples(t *testing.T, st *store.Store, id int64) int64 {
	t.Helper()
	ps, err := st.SamplingProgressFor(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, p := range ps {
		n += p.Samples
	}
	return n
}

// Adaptive sampling of 40 MATH500 problems (the shipped base and SimpleRL
// counts replayed, seeded picks) with a budget of 1,000 samples of the
// uniform 2,560 at n = 32: it finishes, never draws more than the budget nor
// more than n on a problem (every problem's indices are 0 … its n − 1), is
// paused mid-design and resumed, and a second comparison with the same seed
// and no pause draws exactly the same design (the same n and c on every
// model and problem).
func TestAdaptiveSampling(t *testing.T) {
	e, box := startSampling(t)
	ctx := context.Background()
	baseURL, _ := countsServer(t, "qwen2.5-7b-base.csv", replay.Options{Latency: 20 * time.Millisecond})
	rlURL, _ := countsServer(t, "qwen2.5-7b-simplerl-zoo.csv", replay.Options{Latency: 20 * time.Millisecond})
	const n, budget, problems = 32, 1000, 40
	spec := func() intake.SampleSpec {
		s := adaptiveSpec(t, baseURL, rlURL, n, budget, 4)
		s.Config.Limit, s.Config.PerRequest = problems, 4
		return s
	}
	id, err := intake.CreateSampling(ctx, e.st, e.client, box, spec())
	if err != nil {
		t.Fatal(err)
	}

	// Pause once the pilot is in and a later round is planned.
	deadline := time.Now().Add(time.Minute)
	for {
		rounds, _, err := e.st.AdaptiveProgress(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if rounds >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no second round after a minute (%d samples)", drawnSamples(t, e.st, id))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := jobs.PauseSampling(ctx, e.client, e.st, id); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // River cancels the running jobs' requests
	paused := drawnSamples(t, e.st, id)
	roundsPaused, _, _ := e.st.AdaptiveProgress(ctx, id)
	time.Sleep(time.Second)
	roundsLater, _, _ := e.st.AdaptiveProgress(ctx, id)
	if now := drawnSamples(t, e.st, id); now != paused || roundsLater != roundsPaused {
		t.Fatalf("paused at %d samples and %d rounds, then %d and %d a second later", paused, roundsPaused, now, roundsLater)
	}
	if c, _ := e.st.GetComparison(ctx, id); c.Status != store.StatusPaused {
		t.Fatalf("comparison %s after the pause", c.Status)
	}
	if err := jobs.ResumeSampling(ctx, e.client, e.st, id); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, id, 2*time.Minute)
	t.Logf("paused at %d samples in round %d", paused, roundsPaused)

	check := func(id int64) []map[int64]cellStat {
		c, err := e.st.GetComparison(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if c.Status != store.StatusReady {
			t.Fatalf("comparison %d: %s %s", id, c.Status, c.Error)
		}
		stats := cellStats(t, e.st, c)
		total := 0
		for m, cells := range stats {
			if len(cells) != problems {
				t.Errorf("%s: samples on %d problems; want %d", c.Runs[m].ModelName, len(cells), problems)
			}
			for pid, s := range cells {
				total += s.n
				if s.n > n || s.distinct != s.n || s.extent != s.n {
					t.Errorf("%s, problem %d: %d samples, %d distinct indices, up to index %d; want at most n = %d, indices 0 … n − 1",
						c.Runs[m].ModelName, pid, s.n, s.distinct, s.extent-1, n)
				}
			}
		}
		if total > budget {
			t.Errorf("%d samples drawn; the budget is %d", total, budget)
		}
		rounds, last, err := e.st.AdaptiveProgress(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if rounds < 3 || last == nil || last.Planned != 0 || len(last.Widest) != 2 {
			t.Errorf("%d rounds, last plan %+v; want at least 3 rounds, then a record of the end with both models' interval widths", rounds, last)
		}
		counts, err := e.st.CountsForComparison(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for m, r := range c.Runs {
			for _, x := range counts[r.ID] {
				if s := stats[m][x.ProblemID]; x.N != s.n || x.C != s.correct {
					t.Errorf("%s, problem %d: counted n = %d, c = %d; stored %d samples, %d correct", r.ModelName, x.ProblemID, x.N, x.C, s.n, s.correct)
				}
			}
		}
		rep, err := analysis.Build(ctx, e.st, id)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Problems != problems {
			t.Errorf("report on %d problems; want %d", rep.Problems, problems)
		}
		t.Logf("comparison %d: %d samples of the budget %d (uniform %d) in %d rounds", id, total, budget, 2*problems*n, rounds)
		return stats
	}
	first := check(id)

	again, err := intake.CreateSampling(ctx, e.st, e.client, box, spec())
	if err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, again, 2*time.Minute)
	second := check(again)
	for m := range first {
		for pid, s := range first[m] {
			if second[m][pid] != s {
				t.Errorf("model %d, problem %d: %+v with a pause, %+v without; the same seed must give the same design", m, pid, s, second[m][pid])
			}
		}
	}
}

// A budget outside [2 × models × problems, n × models × problems] is refused
// in words, and a budget without adaptive sampling too.
func TestAdaptiveBudgetBounds(t *testing.T) {
	cfg := jobs.DefaultSamplingConfig()
	cfg.N, cfg.Adaptive = 128, true
	for _, tc := range []struct {
		budget int
		want   string
	}{
		{1999, "a budget of 1,999 samples is too small: adaptive sampling draws at least 2 samples per model and problem, 2,000 for 2 models × 500 problems"},
		{2000, ""},
		{64000, ""},
		{128000, ""},
		{128001, "a budget of 128,001 samples is more than the uniform design draws (n = 128 × 2 models × 500 problems = 128,000): lower the budget or raise n"},
	} {
		cfg.Budget = tc.budget
		err := cfg.CheckBudget(2, 500)
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("budget %d: %v; want %q", tc.budget, err, tc.want)
		}
		var be *jobs.BudgetError
		if err != nil && !errors.As(err, &be) {
			t.Errorf("budget %d: %T, want a *jobs.BudgetError", tc.budget, err)
		}
	}
	cfg.Limit, cfg.Budget = 10, 2561 // the first 10 problems: uniform 128 × 2 × 10 = 2,560
	if err := cfg.CheckBudget(2, 500); err == nil || !strings.Contains(err.Error(), "10 problems = 2,560") {
		t.Errorf("limit 10: %v", err)
	}
	cfg = jobs.DefaultSamplingConfig()
	cfg.Budget = 100
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "applies only to adaptive sampling") {
		t.Errorf("budget without adaptive: %v", err)
	}
	cfg.Adaptive, cfg.Budget = true, 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "needs a budget") {
		t.Errorf("adaptive without a budget: %v", err)
	}
}

// The issue 24 end-to-end run: two replay servers serve the MATH500
// per-problem counts of Qwen2.5-7B base and SimpleRL-Zoo (n = 128 each) as
// completions, and `reach sample --dataset math500 --base … --model … --n
// 128 --adaptive --budget 64000 --seed 7 --wait` samples them adaptively.
// It draws at most 64,000 samples (half the uniform 128,000), every
// models[].pass_at_k of the report (k = 1 … 128) is within 1.5 points of the
// full data's, and the crossover k* lies in the full data's 95% interval
// [8.2, 30.5]. `make adaptive-check` runs it; go test -v prints the figures.
//
// The servers ignore the requests' seeds (replay.Options.IgnoreSeed) and
// hand out each problem's recorded completions, shuffled, in order: a
// seeded pick would draw with replacement from the 128, whose pass@128 is
// not the full data's (the base model's is 0.9 points lower, from its 10
// problems solved once in 128), so the test would measure the replay, not
// the design.
func TestAdaptiveMATH500(t *testing.T) {
	if testing.Short() {
		t.Skip("samples 64,000 completions")
	}
	started := time.Now()
	e, box := startSampling(t)
	ctx := context.Background()
	baseURL, baseFull := countsServer(t, "qwen2.5-7b-base.csv", replay.Options{IgnoreSeed: true})
	rlURL, rlFull := countsServer(t, "qwen2.5-7b-simplerl-zoo.csv", replay.Options{IgnoreSeed: true})
	id, err := intake.CreateSampling(ctx, e.st, e.client, box, adaptiveSpec(t, baseURL, rlURL, 128, 64000, 16))
	if err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, id, 15*time.Minute)
	sampled := time.Since(started)

	drawn := drawnSamples(t, e.st, id)
	rounds, _, err := e.st.AdaptiveProgress(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Build(ctx, e.st, id)
	if err != nil {
		t.Fatal(err)
	}
	if drawn > 64000 {
		t.Errorf("%d samples drawn; the budget is 64,000", drawn)
	}
	maxDelta, worst := 0.0, ""
	for m, full := range []map[string]passk.Count{baseFull, rlFull} {
		var cs []passk.Count
		for _, x := range full {
			cs = append(cs, x)
		}
		want, err := passk.CurveAll(cs)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int]float64{}
		for _, p := range rep.Models[m].PassAtK {
			got[p.K] = p.Value
		}
		for k := 1; k <= 128; k++ {
			v, ok := got[k]
			if !ok {
				t.Errorf("%s: the report has no pass@%d (it goes to k = %d)", rep.Models[m].Name, k, len(rep.Models[m].PassAtK))
				break
			}
			if d := math.Abs(v - want[k-1]); d > maxDelta {
				maxDelta, worst = d, fmt.Sprintf("%s pass@%d: %.2f%% sampled, %.2f%% full data", rep.Models[m].Name, k, 100*v, 100*want[k-1])
			}
		}
	}
	cr := rep.Pairs[0].Crossover
	t.Logf("samples drawn: %d of the budget 64,000 (uniform design 128,000) in %d rounds; sampling took %v", drawn, rounds, sampled.Round(time.Second))
	t.Logf("max |Δpass@k| over k = 1 … 128 and both models: %.2f points (%s)", 100*maxDelta, worst)
	t.Logf("crossover k* = %.1f (found %v; %s); the full data's 95%% interval is [8.2, 30.5]", cr.K, cr.Found, cr.Label)
	if maxDelta > 0.015 {
		t.Errorf("max |Δpass@k| = %.2f points; want at most 1.5 (%s)", 100*maxDelta, worst)
	}
	if !cr.Found || cr.K < 8.2 || cr.K > 30.5 {
		t.Errorf("crossover %+v; want k* in [8.2, 30.5]", cr)
	}
}

// A round job lost between two rounds (its worker killed after the round's
// last chunk, before the job was stored) leaves an adaptive comparison
// sampling with no chunk open and no job on it. The reaper's repair plans
// the next round, rather than counting what is there, and the design goes
// on to its budget.
func TestAdaptiveRoundRepaired(t *testing.T) {
	e := startWith(t, func(c *jobs.Config) {
		c.SamplingWorkers = 16
		c.Lease = jobs.LeaseConfig{ReapEvery: 300 * time.Millisecond, StuckAfter: time.Second}
	})
	ctx := context.Background()
	baseURL, _ := countsServer(t, "qwen2.5-7b-base.csv", replay.Options{})
	rlURL, _ := countsServer(t, "qwen2.5-7b-simplerl-zoo.csv", replay.Options{})
	spec := adaptiveSpec(t, baseURL, rlURL, 32, 600, 4)
	spec.Config.Limit = 40
	id, err := intake.CreateSampling(ctx, e.st, e.client, nil, spec)
	if err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, id, time.Minute)
	before := drawnSamples(t, e.st, id)
	roundsBefore, _, _ := e.st.AdaptiveProgress(ctx, id)

	// The state between two rounds of a design with budget left (900 now),
	// whose round job never ran.
	cfg := spec.Config
	cfg.Budget = 900
	if err := e.st.SetSamplingConfig(ctx, id, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Pool().Exec(ctx, `DELETE FROM adaptive_rounds WHERE comparison_id = $1 AND planned = 0`, id); err != nil {
		t.Fatal(err)
	}
	c, err := e.st.GetComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Runs {
		if err := e.st.SetRunStatus(ctx, r.ID, store.StatusSampling, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.st.SetComparisonStatus(ctx, id, store.StatusSampling, ""); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, id, time.Minute)
	after := drawnSamples(t, e.st, id)
	rounds, last, err := e.st.AdaptiveProgress(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if after <= before || after > 900 || rounds <= roundsBefore || last == nil || last.Planned != 0 {
		t.Errorf("repaired design: %d samples (had %d, budget 900), %d rounds (had %d), last plan %+v; want more rounds up to the budget",
			after, before, rounds, roundsBefore, last)
	}
	t.Logf("%d samples in %d rounds, then %d in %d after the repair", before, roundsBefore, after, rounds)
}

package jobs_test

import (
	"bufio"
	"context"
	"encoding/json"
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
	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/internal/testfiles"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// startWithDraws is start with the statistics job's bootstrap draws set.
func startWithDraws(t *testing.T, draws int) env {
	t.Helper()
	st, _ := testdb.New(t)
	client, err := jobs.NewClient(st, jobs.Config{Workers: 4, Verifier: vmath.New(), StatsDraws: draws,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
	return env{st, client}
}

// reportJSON waits until the report's statistics are attached and returns
// the report as a script sees it (the JSON of GET .../report).
func (e env) reportJSON(t *testing.T, id int64, opt analysis.Options) map[string]any {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		rep, err := analysis.BuildWith(context.Background(), e.st, id, opt)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Stats.Status == analysis.StatsFailed {
			t.Fatalf("statistics failed: %s", rep.Stats.Error)
		}
		if rep.Stats.Status == analysis.StatsReady {
			b, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			var out map[string]any
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("statistics of comparison %d not ready after 3 minutes", id)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// get walks a decoded JSON value: keys for objects, ints for arrays.
func get(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: not an object at %q", path, k)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("%v: no element %d", path, k)
			}
			v = a[k]
		}
	}
	return v
}

func num(t *testing.T, v any, path ...any) float64 {
	t.Helper()
	f, ok := get(t, v, path...).(float64)
	if !ok {
		t.Fatalf("%v is not a number: %v", path, get(t, v, path...))
	}
	return f
}

// Issue 6: the paired 95% interval of pass@128(RL) − pass@128(base) from
// 20,000 draws is within 0.3 points of the public reproduction's
// [−5.00, −1.40], read from the report JSON the statistics job filled; the
// JSON carries each base-only problem's Fisher p-value.
func TestMATH500StatsInReport(t *testing.T) {
	e := startWithDraws(t, 20000)
	dir := repoData(t, "generations/math500-qwen25-7b-base-vs-simplerl-counts")
	ctx := context.Background()
	id, _, err := intake.Create(ctx, e.st, e.client, intake.Spec{
		Name:    "math500",
		Dataset: intake.LocalFile(repoData(t, "math500/test.jsonl")),
		Models: []intake.Model{
			{Name: "Qwen2.5-7B", File: intake.LocalFile(filepath.Join(dir, "qwen2.5-7b-base.csv"))},
			{Name: "SimpleRL-Zoo", File: intake.LocalFile(filepath.Join(dir, "qwen2.5-7b-simplerl-zoo.csv"))},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, id)
	// Counts-only imports never pass the aggregate job; the page (or the
	// periodic sweep) asks for the statistics.
	if err := jobs.StartStats(ctx, e.client, id); err != nil {
		t.Fatal(err)
	}
	rep := e.reportJSON(t, id, analysis.Options{})

	if d := num(t, rep, "stats", "draws"); d != 20000 {
		t.Fatalf("draws %v, want 20000", d)
	}
	diff := get(t, rep, "pairs", 0, "diff").([]any)
	if len(diff) != 128 || num(t, diff[127], "k") != 128 {
		t.Fatalf("diff curve has %d points", len(diff))
	}
	lo, hi := 100*num(t, diff[127], "ci", "lo"), 100*num(t, diff[127], "ci", "hi")
	if math.Abs(lo-(-5.00)) > 0.3 || math.Abs(hi-(-1.40)) > 0.3 {
		t.Errorf("pass@128 difference 95%% CI [%.2f, %.2f] pts; want within 0.3 of [-5.00, -1.40]", lo, hi)
	}
	if v := 100 * num(t, diff[127], "value"); math.Abs(v-(-3.20)) > 0.005 {
		t.Errorf("pass@128 difference %.3f pts, want -3.20", v)
	}
	t.Logf("pass@128(RL) − pass@128(base) = %.2f [%.2f, %.2f] pts", 100*num(t, diff[127], "value"), lo, hi)

	// Intervals on the headline figures bracket their point estimates.
	for m := range 2 {
		p1 := num(t, rep, "models", m, "pass_at_1")
		if l, h := num(t, rep, "models", m, "pass_at_1_ci", "lo"), num(t, rep, "models", m, "pass_at_1_ci", "hi"); !(l < p1 && p1 < h) {
			t.Errorf("model %d pass@1 %.4f outside its CI [%.4f, %.4f]", m, p1, l, h)
		}
		// Bands at the ks the chart draws: every k up to 64, then 8 per doubling, and 128.
		if n := len(get(t, rep, "models", m, "pass_at_k_ci").([]any)); n != len(analysis.ChartKs(128)) || num(t, rep, "models", m, "pass_at_k_ci", n-1, "k") != 128 {
			t.Errorf("model %d has %d pass@k bands, want %d up to k = 128", m, n, len(analysis.ChartKs(128)))
		}
	}
	dse := num(t, rep, "pairs", 0, "delta_se")
	if l, h := num(t, rep, "pairs", 0, "delta_se_ci", "lo"), num(t, rep, "pairs", 0, "delta_se_ci", "hi"); !(l < dse && dse < h) {
		t.Errorf("ΔSE %.4f outside its CI [%.4f, %.4f]", dse, l, h)
	}
	if get(t, rep, "pairs", 0, "crossover_ci", "lo", "found") != true {
		t.Errorf("crossover CI: %v", get(t, rep, "pairs", 0, "crossover_ci"))
	}

	// Each base-only problem's p-value, equal to Fisher's test on its counts.
	tests := get(t, rep, "pairs", 0, "base_only_tests").([]any)
	ids := get(t, rep, "base_only").([]any)
	if len(tests) != 19 || len(ids) != 19 {
		t.Fatalf("%d base-only tests for %d base-only problems; want 19", len(tests), len(ids))
	}
	sig := 0
	for i, x := range tests {
		if get(t, x, "problem_id") != ids[i] {
			t.Errorf("test %d is for %v, want %v", i, get(t, x, "problem_id"), ids[i])
		}
		p := num(t, x, "p_value")
		want, err := passk.FisherExact(int(num(t, x, "base_c")), int(num(t, x, "base_n")), int(num(t, x, "other_c")), int(num(t, x, "other_n")))
		if err != nil || math.Abs(p-want) > 1e-12 || num(t, x, "other_c") != 0 || num(t, x, "base_c") < 1 {
			t.Errorf("base-only %v: p %v, want %v (%v)", ids[i], p, want, err)
		}
		if luck := get(t, x, "could_be_luck").(bool); luck != (p >= 0.05) {
			t.Errorf("base-only %v: could_be_luck %v with p %v", ids[i], luck, p)
		}
		if p < 0.05 {
			sig++
		}
	}
	if int(num(t, rep, "pairs", 0, "base_only_significant")) != sig {
		t.Errorf("base_only_significant %v, want %d", get(t, rep, "pairs", 0, "base_only_significant"), sig)
	}
	t.Logf("base-only 19 (%d significant at 5%%, %v after Holm)", sig, get(t, rep, "pairs", 0, "base_only_significant_holm"))

	// Cover@τ: Cover@0 = 1, Cover@1 = share of problems with c = n.
	cover := get(t, rep, "models", 0, "cover").([]any)
	if len(cover) != 41 || num(t, cover[0], "value") != 1 {
		t.Errorf("cover curve %v", cover[:2])
	}

	// The "exclude guessable" variant has its own statistics.
	ung := e.reportJSON(t, id, analysis.Options{ExcludeGuessable: true})
	ex := int(num(t, ung, "excluded_guessable"))
	if get(t, ung, "variant") != "unguessable" || ex < 100 || int(num(t, ung, "problems"))+ex != 500 {
		t.Errorf("unguessable variant: %v problems, %d excluded", get(t, ung, "problems"), ex)
	}
	if n := len(get(t, ung, "pairs", 0, "diff", 127, "ci").(map[string]any)); n != 2 {
		t.Errorf("unguessable variant has no difference interval")
	}
}

// rollouts reads one GSM8K rollout file: qid -> n_correct (of 8).
func rollouts(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var row struct {
			QID      json.Number `json:"qid"`
			NCorrect int         `json:"n_correct"`
			N        int         `json:"n_rollouts"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if row.N != 8 {
			t.Fatalf("%s qid %s: %d rollouts", path, row.QID, row.N)
		}
		out[row.QID.String()] = row.NCorrect
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Issue 6: the real PPO checkpoint series. The trajectory shows pass@1 and
// pass@8 per step matching the files' per-problem labels, and the UpSet
// intersections match a hand count.
func TestGSM8KCheckpointTrajectory(t *testing.T) { testGSM8KCheckpointTrajectory(t) }

// TestGSM8KCheckpointTrajectoryUnlicensed is TestGSM8KCheckpointTrajectory on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestGSM8KCheckpointTrajectory runs on the stand-in.
func TestGSM8KCheckpointTrajectoryUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testGSM8KCheckpointTrajectory(t)
}

func testGSM8KCheckpointTrajectory(t *testing.T) {
	e := startWithDraws(t, 0)
	dir := testfiles.GSM8KProbe(t)
	files := []string{"results_2048_batched/sft_raw.jsonl", "trajectory/step-100/rl_raw.jsonl", "trajectory/step-300/rl_raw.jsonl",
		"trajectory/step-500/rl_raw.jsonl", "trajectory/step-1000/rl_raw.jsonl", "results_2048_batched/rl_raw.jsonl"}
	names := []string{"SFT", "PPO step 100", "PPO step 300", "PPO step 500", "PPO step 1000", "PPO final"}
	steps := []int{0, 100, 300, 500, 1000, -1}
	spec := intake.Spec{Name: "gsm8k-trajectory", Dataset: intake.LocalFile(filepath.Join(dir, "data/gsm8k_subset.jsonl")), AcceptGuess: true}
	labels := make([]map[string]int, len(files))
	for i, f := range files {
		m := intake.Model{Name: names[i], File: intake.LocalFile(filepath.Join(dir, f))}
		switch {
		case i == 0:
			m.Role = "base"
		case steps[i] > 0:
			m.Role, m.Step = "checkpoint", &steps[i]
		default:
			m.Role = "rl"
		}
		spec.Models = append(spec.Models, m)
		labels[i] = rollouts(t, filepath.Join(dir, f))
	}
	id, _, err := intake.Create(context.Background(), e.st, e.client, spec)
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, id)
	// Samples go through the aggregate job, which enqueues the statistics.
	rep := e.reportJSON(t, id, analysis.Options{})
	if num(t, rep, "k_max") != 8 || num(t, rep, "problems") != 30 {
		t.Fatalf("k_max %v, problems %v", get(t, rep, "k_max"), get(t, rep, "problems"))
	}

	// Expected pass@1 = mean c/8; pass@8 = share of problems with c >= 1.
	traj := get(t, rep, "trajectory").([]any)
	if len(traj) != 5 {
		t.Fatalf("trajectory has %d points, want 5 (SFT at step 0 and steps 100..1000)", len(traj))
	}
	for i, x := range traj {
		m := slices.Index(names, get(t, x, "model").(string))
		if m < 0 || num(t, x, "step") != float64(steps[m]) || m != i {
			t.Fatalf("trajectory point %d: %v", i, x)
		}
		sum, solved := 0, 0
		for _, c := range labels[m] {
			sum += c
			if c >= 1 {
				solved++
			}
		}
		want1, want8 := float64(sum)/240, float64(solved)/30
		if got := num(t, x, "pass_at_1"); math.Abs(got-want1) > 1e-12 {
			t.Errorf("step %d pass@1 %.4f, want %.4f", steps[m], got, want1)
		}
		if got := num(t, x, "pass_at_kmax"); math.Abs(got-want8) > 1e-12 {
			t.Errorf("step %d pass@8 %.4f, want %.4f", steps[m], got, want8)
		}
		l, h := num(t, x, "pass_at_1_ci", "lo"), num(t, x, "pass_at_1_ci", "hi")
		if !(l <= want1 && want1 <= h) {
			t.Errorf("step %d pass@1 CI [%.3f, %.3f] misses %.3f", steps[m], l, h, want1)
		}
		t.Logf("step %4d %-14s pass@1 %.3f [%.3f, %.3f]  pass@8 %.3f", steps[m], names[m], want1, l, h, want8)
	}

	// UpSet: group the problems by exactly which models solved them.
	hand := map[string]int{}
	for qid := range labels[0] {
		var who []string
		for m := range labels {
			if labels[m][qid] >= 1 {
				who = append(who, names[m])
			}
		}
		hand[strings.Join(who, "+")]++
	}
	got := map[string]int{}
	total := 0
	for _, x := range get(t, rep, "intersections").([]any) {
		var who []string
		for _, n := range get(t, x, "members").([]any) {
			who = append(who, n.(string))
		}
		c := int(num(t, x, "count"))
		if c != len(get(t, x, "problem_ids").([]any)) {
			t.Errorf("intersection %v: count %d but %d problem ids", who, c, len(get(t, x, "problem_ids").([]any)))
		}
		got[strings.Join(who, "+")] = c
		total += c
	}
	if total != 30 || len(got) != len(hand) {
		t.Errorf("intersections %v (total %d); hand count %v", got, total, hand)
	}
	for k, v := range hand {
		if got[k] != v {
			t.Errorf("intersection %q: %d, hand count %d", k, got[k], v)
		}
	}
	t.Logf("UpSet: %v", got)

	// maj@k from the rollouts' extracted answers: maj@1 = pass@1 (a single
	// answer is its own majority).
	for m := range names {
		maj := get(t, rep, "models", m, "maj_at_k")
		if maj == nil {
			t.Errorf("%s has no maj@k", names[m])
			continue
		}
		if v, p := num(t, maj, 0, "value"), num(t, rep, "models", m, "pass_at_1"); math.Abs(v-p) > 1e-9 {
			t.Errorf("%s maj@1 %.4f != pass@1 %.4f", names[m], v, p)
		}
	}
}

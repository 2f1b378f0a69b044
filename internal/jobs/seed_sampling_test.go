package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/examples"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/replay"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/internal/testfiles"
)

// seedPool is how many recorded completions each problem's replay pool
// holds: the real GSM8K rollouts (8 per problem), each repeated under
// pool/8 numbered "Draw v." headers, so every pool entry is a distinct
// text that says which entry it is.
const seedPool = 512

// replayPool serves the GSM8K SFT and PPO rollouts as two endpoints whose
// pools hold seedPool distinct texts per problem.
func replayPool(t *testing.T, opts replay.Options) (sftURL, ppoURL string) {
	t.Helper()
	dir := testfiles.GSM8KProbe(t)
	var urls []string
	for _, f := range []string{"sft_raw.jsonl", "rl_raw.jsonl"} {
		recs, err := replay.Load(context.Background(), filepath.Join(dir, "results_1024_cuda", f), filepath.Join(dir, "data/gsm8k_subset.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		pools := map[string][]string{}
		for st, texts := range recs {
			for v := range seedPool {
				pools[st] = append(pools[st], fmt.Sprintf("Draw %d.\n%s", v, texts[v%len(texts)]))
			}
		}
		srv := httptest.NewServer(replay.New(pools, opts))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL+"/v1")
	}
	return urls[0], urls[1]
}

// drawn is one stored sample: its pool entry (from the "Draw v." header),
// text and seed.
type drawn struct {
	entry  int
	text   string
	seed   int64
	seeded bool
}

// samplesByKey returns each model's samples: model name -> problem key ->
// by sample index.
func samplesByKey(t *testing.T, st *store.Store, id int64) map[string]map[string][]drawn {
	t.Helper()
	ctx := context.Background()
	c, err := st.GetComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string][]drawn{}
	for _, r := range c.Runs {
		rows, err := st.Pool().Query(ctx, `SELECT p.key, s.sample_index, s.completion, s.seed FROM samples s
			JOIN problems p ON p.id = s.problem_id WHERE s.run_id = $1 ORDER BY p.key, s.sample_index`, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string][]drawn{}
		for rows.Next() {
			var key, text string
			var idx int
			var seed *int64
			if err := rows.Scan(&key, &idx, &text, &seed); err != nil {
				t.Fatal(err)
			}
			if idx != len(m[key]) {
				t.Fatalf("%s problem %s: sample index %d after %d samples", r.ModelName, key, idx, len(m[key]))
			}
			d := drawn{entry: -1, text: text, seeded: seed != nil}
			if seed != nil {
				d.seed = *seed
			}
			fmt.Sscanf(text, "Draw %d.", &d.entry)
			m[key] = append(m[key], d)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		out[r.ModelName] = m
	}
	return out
}

// checkSeeded checks every model's samples against the rule: sample i of
// problem key was requested with SampleSeed(seed, key, i) and got the pool
// entry the replay server picks for it, so each problem has exactly as many
// distinct texts as those picks (pigeonholed into seedPool entries) allow.
func checkSeeded(t *testing.T, label string, got map[string]map[string][]drawn, seed int64, problems, n int) {
	t.Helper()
	for model, byKey := range got {
		if len(byKey) != problems {
			t.Errorf("%s %s: %d problems sampled; want %d", label, model, len(byKey), problems)
		}
		for key, ss := range byKey {
			if len(ss) != n {
				t.Errorf("%s %s problem %s: %d samples; want %d", label, model, key, len(ss), n)
				continue
			}
			picks, texts := map[int]bool{}, map[string]bool{}
			for i, s := range ss {
				want := jobs.SampleSeed(seed, key, i)
				if !s.seeded || s.seed != want {
					t.Fatalf("%s %s problem %s sample %d: seed %d (stored: %v); want %d", label, model, key, i, s.seed, s.seeded, want)
				}
				if pick := replay.SeededPick(want, 0, seedPool); s.entry != pick {
					t.Fatalf("%s %s problem %s sample %d: pool entry %d; want %d", label, model, key, i, s.entry, pick)
				}
				picks[s.entry], texts[s.text] = true, true
			}
			if len(texts) != len(picks) || len(texts) <= n/2 {
				t.Errorf("%s %s problem %s: %d distinct texts of %d; the pool allows %d", label, model, key, len(texts), n, len(picks))
			}
		}
	}
}

// Issue 9 case 2: with a seed, every sample index is drawn with its own
// seed, so a problem's 32 samples are as distinct as the replay pool allows
// (not 16 of 32 with 16 per request, not 1 with one per request); the same
// seed gives the same texts whatever the samples per request; raising n
// keeps the samples drawn and adds new ones by the same rule. A file made
// the way seed reuse made them (one seed per chunk: chunk 2 repeats chunk
// 1; one seed per request: one text n times) is flagged on the page.
// Retried requests (429 and 500 injected) get the same texts.
func TestSeededSamplingDistinct(t *testing.T) { testSeededSamplingDistinct(t) }

// TestSeededSamplingDistinctUnlicensed is TestSeededSamplingDistinct on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestSeededSamplingDistinct runs on the stand-in.
func TestSeededSamplingDistinctUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testSeededSamplingDistinct(t)
}

func testSeededSamplingDistinct(t *testing.T) {
	e, box := startSampling(t)
	ctx := context.Background()
	sft, ppo := replayPool(t, replay.Options{})
	const seed, problems = 20261130, 10
	spec := func(perRequest int) intake.SampleSpec {
		s := sampleSpec(t, sft, ppo, 32)
		sd := int64(seed)
		s.Config.Seed, s.Config.PerRequest, s.Config.Limit = &sd, perRequest, problems
		return s
	}
	run := func(s intake.SampleSpec) int64 {
		id, err := intake.CreateSampling(ctx, e.st, e.client, box, s)
		if err != nil {
			t.Fatal(err)
		}
		if c := e.wait(t, id); c.Status != store.StatusReady {
			t.Fatalf("sampled comparison %s: %s", c.Status, c.Error)
		}
		return id
	}
	noDuplicateWarning := func(label string, id int64) {
		rep, err := analysis.Build(ctx, e.st, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range rep.Warnings {
			if w.Code == "duplicated-samples" {
				t.Errorf("%s: %s", label, w.Text)
			}
		}
		for _, m := range rep.Models {
			if m.DuplicatedProblems == nil || *m.DuplicatedProblems != 0 || m.DuplicateChecked != problems {
				t.Errorf("%s %s: duplicated problems %v of %d checked; want 0 of %d", label, m.Name, m.DuplicatedProblems, m.DuplicateChecked, problems)
			}
		}
	}

	chunked := run(spec(16))
	a := samplesByKey(t, e.st, chunked)
	checkSeeded(t, "per request 16", a, seed, problems, 32)
	noDuplicateWarning("per request 16", chunked)

	single := run(spec(1))
	b := samplesByKey(t, e.st, single)
	checkSeeded(t, "per request 1", b, seed, problems, 32)
	for model := range a {
		for key := range a[model] {
			if !slices.Equal(a[model][key], b[model][key]) {
				t.Errorf("%s problem %s: the same seed gave other texts with 1 sample per request than with 16", model, key)
			}
		}
	}

	// Retried requests ask with the same seeds: with 20 % of requests
	// answered 429 or 500, the texts are the same.
	flakySFT, flakyPPO := replayPool(t, replay.Options{ErrorRate: 0.2, Seed: 3})
	flaky := spec(16)
	flaky.Models[0].BaseURL, flaky.Models[1].BaseURL = flakySFT, flakyPPO
	retried := run(flaky)
	if c, _ := e.st.GetComparison(ctx, retried); len(c.Runs[0].Usage.Errors) == 0 {
		t.Error("20 % injected errors but none recorded")
	}
	r := samplesByKey(t, e.st, retried)
	for model := range a {
		for key := range a[model] {
			if !slices.Equal(a[model][key], r[model][key]) {
				t.Errorf("%s problem %s: the same seed gave other texts when requests were retried", model, key)
			}
		}
	}

	// Extend n to 40: a partial chunk [32, 40).
	err := e.st.WithTx(ctx, func(tx *store.Store) error {
		cfg := spec(16).Config
		cfg.N = 40
		if err := tx.SetSamplingConfig(ctx, chunked, cfg); err != nil {
			return err
		}
		c, err := tx.GetComparison(ctx, chunked)
		if err != nil {
			return err
		}
		return jobs.StartSampling(ctx, e.client, tx, c)
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // as TestExtendN: let the new jobs start
	e.waitFor(t, chunked, 2*time.Minute)
	extended := samplesByKey(t, e.st, chunked)
	checkSeeded(t, "extended to 40", extended, seed, problems, 40)
	for model := range a {
		for key, before := range a[model] {
			if after := extended[model][key]; len(after) < 32 || !slices.Equal(before, after[:32]) {
				t.Errorf("%s problem %s: extending n changed the first 32 samples", model, key)
			}
		}
	}
	noDuplicateWarning("extended", chunked)

	// What seed reuse drew: PPO chunk 2 = chunk 1 (16 distinct of 32), SFT
	// one text 32 times (one seed for every one-sample request).
	dir := t.TempDir()
	write := func(name string, byKey map[string][]drawn, text func(ss []drawn, i int) string) string {
		var sb strings.Builder
		for _, key := range slices.Sorted(maps.Keys(byKey)) {
			var comps []string
			for i := range 32 {
				comps = append(comps, text(byKey[key], i))
			}
			line, _ := json.Marshal(map[string]any{"problem_id": key, "completions": comps})
			sb.Write(append(line, '\n'))
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("sft.jsonl", a["SFT"], func(ss []drawn, _ int) string { return ss[0].text })
	rl := write("ppo.jsonl", a["PPO"], func(ss []drawn, i int) string { return ss[i%16].text })
	rep := e.importReady(t, intake.Spec{Name: "seed reused", Dataset: spec(1).Dataset,
		Models: []intake.Model{{Name: "SFT", File: intake.LocalFile(base)}, {Name: "PPO", File: intake.LocalFile(rl)}}})
	// The worst problems: SFT's have one text; PPO's the fewest distinct
	// texts among their first 16 samples (16 unless two seeds picked the
	// same pool entry).
	fewest := 16
	for _, ss := range a["PPO"] {
		d := map[string]bool{}
		for _, s := range ss[:16] {
			d[s.text] = true
		}
		fewest = min(fewest, len(d))
	}
	var texts []string
	for _, w := range rep.Warnings {
		if w.Code == "duplicated-samples" {
			texts = append(texts, w.Text)
		}
	}
	worst := regexp.MustCompile(`^PPO: problem \d+ has 32 samples but only (\d+) distinct texts, and 10 of its 10 problems with n ≥ 8 have at most half`)
	if len(texts) != 2 ||
		!strings.HasPrefix(texts[0], "SFT: problem ") || !strings.Contains(texts[0], " has 32 samples but only 1 distinct text, and 10 of its 10 problems with n ≥ 8") ||
		worst.FindStringSubmatch(texts[1]) == nil || worst.FindStringSubmatch(texts[1])[1] != strconv.Itoa(fewest) {
		t.Errorf("warnings on the file seed reuse drew (PPO's worst problem has %d distinct texts): %q", fewest, texts)
	}
}

// The shipped examples are not flagged: HumanEval at T = 0.2 repeats texts
// on half its problems by chance (82 of 164 for Mistral-7B-Instruct, 50 for
// Zephyr, ten copies of one function on some), below DuplicatedShare; the
// MATH500 pair is counts only.
func TestExamplesNotFlaggedAsDuplicated(t *testing.T) {
	e := start(t)
	want := map[string]int{"Mistral-7B-Instruct-v0.1": 82, "zephyr-7b-alpha": 50}
	for _, spec := range examples.Specs() {
		rep := e.importReady(t, spec)
		for _, w := range rep.Warnings {
			if w.Code == "duplicated-samples" {
				t.Errorf("%s: %s", spec.Name, w.Text)
			}
		}
		for _, m := range rep.Models {
			w, texts := want[m.Name]
			switch {
			case !texts && m.DuplicatedProblems != nil:
				t.Errorf("%s: duplicate figures %d on a counts-only model", m.Name, *m.DuplicatedProblems)
			case texts && (m.DuplicatedProblems == nil || *m.DuplicatedProblems != w || m.DuplicateChecked != 164):
				t.Errorf("%s: duplicated problems %v of %d; want %d of 164", m.Name, m.DuplicatedProblems, m.DuplicateChecked, w)
			}
		}
	}
}

// `reach sample --seed N --wait` samples with per-sample seeds derived
// from N: the stored config has seed N and every sample its SampleSeed
// and the pool entry the replay server picks for it.
func TestSampleCLISeed(t *testing.T) { testSampleCLISeed(t) }

// TestSampleCLISeedUnlicensed is TestSampleCLISeed on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestSampleCLISeed runs on the stand-in.
func TestSampleCLISeedUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testSampleCLISeed(t)
}

func testSampleCLISeed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildReach(t)
	st, dbURL := testdb.New(t)
	sft, ppo := replayPool(t, replay.Options{})
	dir := testfiles.GSM8KProbe(t)
	cmd := exec.Command(bin, "sample", "--database-url", dbURL, "--dataset", filepath.Join(dir, "data/gsm8k_subset.jsonl"),
		"--name", "cli seeded", "--template", "gsm8k", "--n", "8", "--per-request", "4", "--limit", "3", "--seed", "77",
		"--base", "SFT="+sft+"#sft", "--model", "PPO="+ppo+"#ppo", "--wait")
	cmd.Env = append(os.Environ(), "REACH_SECRET="+testSecret, "REACH_LOG_LEVEL=error")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reach sample: %v", err)
	}
	id, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatalf("reach sample printed %q", out)
	}
	c, err := st.GetComparison(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := jobs.ParseSamplingConfig(c.Sampling)
	if err != nil || cfg.Seed == nil || *cfg.Seed != 77 {
		t.Fatalf("config seed %v (%v); want 77", cfg.Seed, err)
	}
	checkSeeded(t, "reach sample --seed 77", samplesByKey(t, st, id), 77, 3, 8)
}

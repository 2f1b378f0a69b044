package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
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
	"github.com/reach-lab/reach/internal/store"
)

// The debate fixture: three arithmetic problems, a base and an RL model
// with four samples each. Written here in Reach's JSONL layouts.
var (
	debateProblems = []map[string]string{
		{"id": "p1", "problem": "What is 2+3?", "answer": "5"},
		{"id": "p2", "problem": "What is 10-4?", "answer": "6"},
		{"id": "p3", "problem": "What is 3*3?", "answer": "9"},
	}
	// Answers: base p1 5 5 6 7, p2 6 4 4 14, p3 6 8 10 (none); RL p1 5 5 5 5, p2 6 6 16 16, p3 9 6 6 6.
	debateSamples = map[string][][]string{
		"base": {
			{"Two plus three is five. \\boxed{5}", "I guess \\boxed{5}", "2+3=6 \\boxed{6}", "\\boxed{7}"},
			{"10-4=6 \\boxed{6}", "\\boxed{4}", "Ten minus four: \\boxed{4}", "\\boxed{14}"},
			{"\\boxed{6}", "\\boxed{8}", "\\boxed{10}", "no idea"},
		},
		"rl": {
			{"Five: \\boxed{5}", "Adding gives 5, \\boxed{5}", "Probably \\boxed{5}", "It is \\boxed{5} somehow"},
			{"Six. \\boxed{6}", "Guessing six, \\boxed{6}", "\\boxed{16}", "So \\boxed{16}"},
			{"Three threes make nine. \\boxed{9}", "Three and three: \\boxed{6}", "\\boxed{6}", "Sum: \\boxed{6}"},
		},
	}
	// The judge's labels of the answer-correct samples.
	debateLabels = map[string]string{
		"Two plus three is five. \\boxed{5}": "valid", "I guess \\boxed{5}": "flawed", "10-4=6 \\boxed{6}": "valid",
		"Five: \\boxed{5}": "valid", "Adding gives 5, \\boxed{5}": "valid", "Probably \\boxed{5}": "flawed",
		"It is \\boxed{5} somehow": "unsure", "Six. \\boxed{6}": "valid", "Guessing six, \\boxed{6}": "flawed",
		"Three threes make nine. \\boxed{9}": "valid",
	}
)

// reachOnce builds the reach binary once for the tests of this package, at
// one fixed path per source tree (overwritten by the next run, so nothing
// piles up). The path names the tree: with one path for all, a test run in
// another checkout replaced the binary while this one's workers started.
var reachOnce = func() func(t *testing.T) string {
	var once sync.Once
	var bin string
	var err error
	return func(t *testing.T) string {
		t.Helper()
		once.Do(func() {
			_, file, _, _ := runtime.Caller(0)
			root := filepath.Join(filepath.Dir(file), "..", "..")
			dir := filepath.Join(os.TempDir(), fmt.Sprintf("reach-test-bin-%08x", crc32.ChecksumIEEE([]byte(root))))
			if err = os.MkdirAll(dir, 0o755); err != nil {
				return
			}
			bin = filepath.Join(dir, "reach")
			cmd := exec.Command("go", "build", "-o", bin, "./cmd/reach")
			cmd.Dir = root
			if out, berr := cmd.CombinedOutput(); berr != nil {
				err = fmt.Errorf("build reach: %v\n%s", berr, out)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return bin
	}
}()

func writeJSONL(t *testing.T, path string, rows []any) {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		line, _ := json.Marshal(r)
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// debateFixture imports the fixture and returns the comparison id and the
// directory of its files.
func (e env) debateFixture(t *testing.T) (int64, string) {
	t.Helper()
	dir := t.TempDir()
	var ds []any
	for _, p := range debateProblems {
		ds = append(ds, p)
	}
	writeJSONL(t, filepath.Join(dir, "dataset.jsonl"), ds)
	for model, probs := range debateSamples {
		var rows []any
		for i, texts := range probs {
			for j, text := range texts {
				rows = append(rows, map[string]any{"problem_id": debateProblems[i]["id"], "sample_index": j, "completion": text})
			}
		}
		writeJSONL(t, filepath.Join(dir, model+".jsonl"), rows)
	}
	var labels []any
	for c, v := range debateLabels {
		labels = append(labels, map[string]string{"completion": c, "verdict": v, "reason": "labelled " + v})
	}
	writeJSONL(t, filepath.Join(dir, "labels.jsonl"), labels)
	id, _, err := intake.Create(context.Background(), e.st, e.client, intake.Spec{
		Name:    "debate fixture",
		Dataset: intake.LocalFile(filepath.Join(dir, "dataset.jsonl")),
		Models: []intake.Model{
			{Name: "base", Role: "base", File: intake.LocalFile(filepath.Join(dir, "base.jsonl"))},
			{Name: "rl", Role: "rl", File: intake.LocalFile(filepath.Join(dir, "rl.jsonl"))},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := e.wait(t, id); c.Status != store.StatusReady {
		t.Fatalf("fixture import failed: %s", c.Error)
	}
	return id, dir
}

// replayServer runs `reach replay-server` with args on a free loopback port
// and returns its base URL.
func replayServer(t *testing.T, bin string, args ...string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, append([]string{"replay-server", "--addr", addr, "--latency", "1ms"}, args...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr + "/v1"
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("replay server on %s did not start", addr)
	return ""
}

// waitDebate waits until no judge or scoring job of the comparison is left.
func (e env) waitDebate(t *testing.T, id int64, purpose string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		n, err := jobs.ActiveDebateJobs(context.Background(), e.st, id, purpose)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s jobs of comparison %d not done after a minute", purpose, id)
}

func near(got, want float64) bool { return math.Abs(got-want) < 1e-9 }

// CoT-pass@k end to end: the judge is `reach replay-server --judge` with the
// fixture's labels; the figures are worked out by hand in the comments.
func TestJudgeJobsAndCoTPassAtK(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := reachOnce(t)
	e := start(t)
	ctx := context.Background()
	id, dir := e.debateFixture(t)
	url := replayServer(t, bin, "--judge", filepath.Join(dir, "labels.jsonl"))
	judge := store.DebateEndpoint{ComparisonID: id, Purpose: store.PurposeJudge, Endpoint: store.Endpoint{BaseURL: url, Model: "judge", Style: "chat",
		MaxConcurrency: 4}, Template: "default", MaxTokens: 64, MaxPerProblem: 2}
	if err := e.st.PutDebateEndpoint(ctx, judge, false); err != nil {
		t.Fatal(err)
	}
	msg, err := jobs.TestDebateEndpoint(ctx, e.st, nil, id, store.PurposeJudge)
	if err != nil || !strings.Contains(msg, "The judge answered VALID for sample #0 of problem p1") {
		t.Fatalf("test the judge: %q, %v", msg, err)
	}

	// Window 2: the answer-correct samples among the first two per problem
	// are base p1 #0 #1, p2 #0 and RL p1 #0 #1, p2 #0 #1, p3 #0: 8 requests.
	left, err := jobs.StartDebate(ctx, e.client, e.st, id, store.PurposeJudge)
	if err != nil || left != 8 {
		t.Fatalf("start judging: %d left, %v; want 8", left, err)
	}
	e.waitDebate(t, id, store.PurposeJudge)
	rep, err := analysis.Build(ctx, e.st, id)
	if err != nil {
		t.Fatal(err)
	}
	cot := rep.CoT
	if cot.Status != analysis.DebateComplete || cot.Problems != 3 || cot.KMax != 2 || cot.Judge != "judge" {
		t.Fatalf("CoT %s over %d problems, k max %d, judge %q", cot.Status, cot.Problems, cot.KMax, cot.Judge)
	}
	// Valid in the window: base p1 1 (#1 flawed), p2 1, p3 0; RL p1 2, p2 1 (#1 flawed), p3 1.
	// CoT-pass@1 base (1/2 + 1/2 + 0)/3 = 1/3, RL (1 + 1/2 + 1/2)/3 = 2/3.
	// CoT-pass@2 base (1 + 1 + 0)/3 = 2/3, RL 1.
	b, r := cot.Models[0], cot.Models[1]
	if !near(b.CoTPassAtK[0].Value, 1.0/3) || !near(r.CoTPassAtK[0].Value, 2.0/3) || !near(b.CoTPassAtK[1].Value, 2.0/3) || !near(r.CoTPassAtK[1].Value, 1) {
		t.Errorf("CoT-pass@1 %v / %v, @2 %v / %v", b.CoTPassAtK[0].Value, r.CoTPassAtK[0].Value, b.CoTPassAtK[1].Value, r.CoTPassAtK[1].Value)
	}
	ep, _ := e.st.GetDebateEndpoint(ctx, id, store.PurposeJudge)
	if ep.Usage.Requests != 8 || ep.Usage.TokensIn == 0 || ep.Usage.TokensOut == 0 {
		t.Errorf("judge usage %+v, want 8 requests with tokens", ep.Usage)
	}

	// Every sample (window 0): RL p1 #2 (flawed) and #3 (unsure) are judged next.
	judge.MaxPerProblem = 0
	if err := e.st.PutDebateEndpoint(ctx, judge, true); err != nil {
		t.Fatal(err)
	}
	if left, err = jobs.StartDebate(ctx, e.client, e.st, id, store.PurposeJudge); err != nil || left != 2 {
		t.Fatalf("judge the rest: %d left, %v; want 2", left, err)
	}
	e.waitDebate(t, id, store.PurposeJudge)
	rep, _ = analysis.Build(ctx, e.st, id)
	cot = rep.CoT
	// Valid: base 1, 1, 0; RL 2 (#3 unsure counts as not valid), 1, 1. n = 4.
	// CoT-pass@1 base (1/4 + 1/4)/3 = 1/6, RL (2/4 + 1/4 + 1/4)/3 = 1/3;
	// CoT-pass@4 base 2/3, RL 1. Answer pass@1: base (2 + 1 + 0)/12 = 1/4, RL 7/12.
	b, r = cot.Models[0], cot.Models[1]
	if cot.KMax != 4 || !near(b.CoTPassAtK[0].Value, 1.0/6) || !near(r.CoTPassAtK[0].Value, 1.0/3) || !near(b.CoTPassAtK[3].Value, 2.0/3) ||
		!near(r.CoTPassAtK[3].Value, 1) || !near(b.PassAtK[0].Value, 0.25) || !near(r.PassAtK[0].Value, 7.0/12) || r.Unsure != 1 {
		t.Errorf("all samples: kmax %d, CoT base %v rl %v, pass base %v rl %v, unsure %d", cot.KMax, b.CoTPassAtK, r.CoTPassAtK, b.PassAtK[0], r.PassAtK[0], r.Unsure)
	}
	if len(cot.Pairs) != 1 || cot.Pairs[0].Crossover.Found {
		t.Errorf("CoT crossover: %+v; RL is ahead at every k", cot.Pairs)
	}

	// People's labels override the judge: RL p1 #3 (unsure) valid, base p1 #1 (flawed) valid,
	// RL p1 #0 (valid) valid. CoT-pass@1 RL (3/4 + 1/4 + 1/4)/3 = 5/12, base (2/4 + 1/4)/3 = 1/4.
	runs := rep.Models
	for _, l := range []store.ReasoningLabel{
		{RunID: runs[1].RunID, ProblemID: problemID(t, e, id, "p1"), SampleIndex: 3, Label: "valid"},
		{RunID: runs[0].RunID, ProblemID: problemID(t, e, id, "p1"), SampleIndex: 1, Label: "valid", Note: "the guess is checked after"},
		{RunID: runs[1].RunID, ProblemID: problemID(t, e, id, "p1"), SampleIndex: 0, Label: "valid"},
	} {
		l.ComparisonID = id
		if err := e.st.SetReasoningLabel(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	rep, _ = analysis.Build(ctx, e.st, id)
	cot = rep.CoT
	if !near(cot.Models[1].CoTPassAtK[0].Value, 5.0/12) || !near(cot.Models[0].CoTPassAtK[0].Value, 0.25) || cot.Models[1].Human != 2 {
		t.Errorf("with labels: CoT-pass@1 base %v, RL %v, RL labels %d", cot.Models[0].CoTPassAtK[0].Value, cot.Models[1].CoTPassAtK[0].Value, cot.Models[1].Human)
	}
	// Agreement: judge valid/human valid 1, judge flawed/human valid 1, judge unsure/human valid 1.
	// Over valid/flawed: [[1 0] [1 0]], p_o = 1/2, p_e = 1/2 · 1 + 1/2 · 0 = 1/2, κ = 0.
	a := cot.Agreement
	if a == nil || a.Samples != 3 || a.Agree != 1 || a.Table != [3][2]int{{1, 0}, {1, 0}, {1, 0}} || a.Kappa == nil || *a.Kappa != 0 {
		t.Errorf("agreement %+v", a)
	}
	// Removing a label gives the judge's verdict back.
	if err := e.st.SetReasoningLabel(ctx, store.ReasoningLabel{ComparisonID: id, RunID: runs[1].RunID, ProblemID: problemID(t, e, id, "p1"), SampleIndex: 3}); err != nil {
		t.Fatal(err)
	}
	rep, _ = analysis.Build(ctx, e.st, id)
	if !near(rep.CoT.Models[1].CoTPassAtK[0].Value, 1.0/3) {
		t.Errorf("label removed: RL CoT-pass@1 %v, want 1/3", rep.CoT.Models[1].CoTPassAtK[0].Value)
	}
}

func problemID(t *testing.T, e env, id int64, key string) int64 {
	t.Helper()
	c, err := e.st.GetComparison(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := e.st.Problems(context.Background(), *c.DatasetID, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Key == key {
			return p.ID
		}
	}
	t.Fatalf("no problem %s", key)
	return 0
}

// A judge that ignores the reply format for some samples: those are stored
// as errors naming the reply, their problems are left out of CoT-pass@k
// (never counted as judged), and a second start tries them again.
func TestJudgeWithoutVerdictLines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := reachOnce(t)
	e := start(t)
	ctx := context.Background()
	id, dir := e.debateFixture(t)
	// Labels for the base model's samples only; the RL model's get a reply without a verdict.
	var baseOnly []any
	for _, texts := range debateSamples["base"] {
		for _, c := range texts {
			if v, ok := debateLabels[c]; ok {
				baseOnly = append(baseOnly, map[string]string{"completion": c, "verdict": v})
			}
		}
	}
	writeJSONL(t, filepath.Join(dir, "base-labels.jsonl"), baseOnly)
	url := replayServer(t, bin, "--judge", filepath.Join(dir, "base-labels.jsonl"), "--judge-default", "none")
	ep := store.DebateEndpoint{ComparisonID: id, Purpose: store.PurposeJudge,
		Endpoint: store.Endpoint{BaseURL: url, Model: "judge", Style: "completions", MaxConcurrency: 2}, Template: "custom",
		TemplateText: "Problem: {{.Problem}}\nSolution: {{.Completion}}\nVERDICT?", MaxTokens: 32}
	if err := e.st.PutDebateEndpoint(ctx, ep, false); err != nil {
		t.Fatal(err)
	}
	if left, err := jobs.StartDebate(ctx, e.client, e.st, id, store.PurposeJudge); err != nil || left != 10 {
		t.Fatalf("start: %d left, %v; want 10", left, err)
	}
	e.waitDebate(t, id, store.PurposeJudge)
	rep, _ := analysis.Build(ctx, e.st, id)
	cot := rep.CoT
	// Every problem has an RL sample without a verdict: none enters.
	if cot.Status != analysis.DebatePartial || cot.Problems != 0 || cot.LeftOut != 3 || cot.Models[1].Errors != 7 || cot.Models[1].Pending != 7 {
		t.Fatalf("CoT %s: %d problems, %d left out, RL errors %d pending %d", cot.Status, cot.Problems, cot.LeftOut, cot.Models[1].Errors, cot.Models[1].Pending)
	}
	found := false
	for _, w := range rep.Warnings {
		found = found || (w.Code == "cot-partial" && strings.Contains(w.Text, "7 of them because the judge failed"))
	}
	if !found {
		t.Errorf("warnings %+v", rep.Warnings)
	}
	js, _, _, err := e.st.ReasoningForProblem(ctx, id, problemID(t, e, id, "p1"))
	if err != nil {
		t.Fatal(err)
	}
	if j := js[store.SampleKey{RunID: rep.Models[1].RunID, SampleIndex: 0}]; j.Verdict != "" || !strings.Contains(j.Error, "no VERDICT line") {
		t.Errorf("stored judgment %+v", j)
	}

	// A judge that knows every sample: the seven failed ones are asked again.
	ep.Endpoint.BaseURL = replayServer(t, bin, "--judge", filepath.Join(dir, "labels.jsonl"))
	if err := e.st.PutDebateEndpoint(ctx, ep, true); err != nil {
		t.Fatal(err)
	}
	if left, err := jobs.StartDebate(ctx, e.client, e.st, id, store.PurposeJudge); err != nil || left != 7 {
		t.Fatalf("restart: %d left, %v; want 7", left, err)
	}
	e.waitDebate(t, id, store.PurposeJudge)
	rep, _ = analysis.Build(ctx, e.st, id)
	if rep.CoT.Status != analysis.DebateComplete || rep.CoT.Problems != 3 || !near(rep.CoT.Models[1].CoTPassAtK[0].Value, 1.0/3) {
		t.Errorf("after the retry: %s, %d problems, RL CoT-pass@1 %v", rep.CoT.Status, rep.CoT.Problems, rep.CoT.Models[1].CoTPassAtK)
	}
}

// Perplexity under the base model end to end: the scoring endpoint is
// `reach replay-server --logprobs prompt_logprobs`, whose log-probability is
// −0.1 per character of each token (runs of white space and of anything
// else), so a completion's perplexity is exp(0.1 · characters / tokens).
// The prompt (qwen-boxed) ends in a newline, so no token straddles the
// boundary. Window 1: each model's first sample per problem.
func TestScoreJobsAndPerplexity(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := reachOnce(t)
	e := start(t)
	ctx := context.Background()
	id, _ := e.debateFixture(t)
	url := replayServer(t, bin, "--logprobs", "prompt_logprobs")
	ep := store.DebateEndpoint{ComparisonID: id, Purpose: store.PurposeScore, Endpoint: store.Endpoint{BaseURL: url, Model: "base",
		Style: "completions", MaxConcurrency: 4}, Template: "qwen-boxed", MaxPerProblem: 1}
	if err := e.st.PutDebateEndpoint(ctx, ep, false); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.StartDebate(ctx, e.client, e.st, id, store.PurposeScore); err == nil || !strings.Contains(err.Error(), "test the connection first") {
		t.Fatalf("scoring before detection: %v", err)
	}
	counted := metricsSnapshot(t)
	msg, err := jobs.TestDebateEndpoint(ctx, e.st, nil, id, store.PurposeScore)
	if err != nil || !strings.Contains(msg, `vLLM's "prompt_logprobs"`) {
		t.Fatalf("detection: %q, %v", msg, err)
	}
	if left, err := jobs.StartDebate(ctx, e.client, e.st, id, store.PurposeScore); err != nil || left != 6 {
		t.Fatalf("start scoring: %d left, %v; want 6", left, err)
	}
	e.waitDebate(t, id, store.PurposeScore)
	// At least one prompt-logprobs request per scored completion, counted as such.
	if got := metricsSnapshot(t)[`reach_endpoint_requests_total{call="logprobs"}`] - counted[`reach_endpoint_requests_total{call="logprobs"}`]; got < 6 {
		t.Errorf("logprobs requests went up by %v, want at least 6", got)
	}
	rep, err := analysis.Build(ctx, e.st, id)
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Perplexity
	if p.Status != analysis.DebateComplete || p.Method != "prompt_logprobs" || p.Scorer != "base" || len(p.Models) != 2 {
		t.Fatalf("perplexity %+v", p)
	}
	// Base #0: "Two plus three is five. \boxed{5}" 11 tokens, 33 characters: e^0.3 (correct);
	// "10-4=6 \boxed{6}" 3 tokens, 16 characters: e^(1.6/3) (correct); "\boxed{6}" 1 token, 9: e^0.9 (wrong).
	// RL #0: "Five: \boxed{5}" 3, 15: e^0.5; "Six. \boxed{6}" 3, 14: e^(1.4/3); "Three threes make nine. \boxed{9}" 9, 33: e^(3.3/9).
	x, y := math.Exp(0.3), math.Exp(1.6/3)
	bc, bi := p.Models[0].Correct, p.Models[0].Incorrect
	if bc == nil || bc.N != 2 || !near(bc.Min, x) || !near(bc.Max, y) || !near(bc.Median, (x+y)/2) || !near(bc.Q1, x+0.25*(y-x)) {
		t.Errorf("base correct %+v", bc)
	}
	if bi == nil || bi.N != 1 || !near(bi.Median, math.Exp(0.9)) {
		t.Errorf("base incorrect %+v", bi)
	}
	lo, mid, hi := math.Exp(3.3/9), math.Exp(1.4/3), math.Exp(0.5)
	rc := p.Models[1].Correct
	if rc == nil || rc.N != 3 || !near(rc.Median, mid) || !near(rc.Q1, lo+0.5*(mid-lo)) || !near(rc.Q3, mid+0.5*(hi-mid)) ||
		!near(rc.Mean, (lo+mid+hi)/3) || p.Models[1].Incorrect != nil {
		t.Errorf("RL correct %+v, incorrect %+v", rc, p.Models[1].Incorrect)
	}
	ps, err := e.st.ProgressForComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range ps {
		if pr.Stage == jobs.StageScore && (pr.Done != 3 || pr.Total != 3 || pr.Status != "done") {
			t.Errorf("scoring progress %+v", pr)
		}
	}
}

// Answer diversity and support from the statistics job and the counts.
func TestDiversityAndSupport(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	id, _ := e.debateFixture(t)
	var rep *analysis.Report
	deadline := time.Now().Add(time.Minute)
	for {
		var err error
		if rep, err = analysis.Build(ctx, e.st, id); err != nil {
			t.Fatal(err)
		}
		if rep.Stats.Status == analysis.StatsReady || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	d := rep.Diversity
	if d.Status != analysis.DebateComplete || len(d.Models) != 2 {
		t.Fatalf("diversity %s (stats %s)", d.Status, rep.Stats.Status)
	}
	// Base: p1 {5, 5, 6, 7} -> classes 2 1 1, H 1.5; p2 {6, 4, 4, 14} -> 1 2 1, H 1.5;
	// p3 {6, 8, 10, none} -> 1 1 1, H log2 3. RL: p1 {5 ×4} H 0; p2 {6 6 16 16} H 1;
	// p3 {9, 6 6 6} H 0.811278 (−¼ log2 ¼ − ¾ log2 ¾).
	want := [][]float64{{1.5, 1.5, math.Log2(3)}, {0, 1, 0.8112781244591328}}
	distinct := [][]int{{3, 3, 3}, {1, 2, 2}}
	for m, md := range d.Models {
		for j, pd := range md.PerProblem {
			if !near(pd.Entropy, want[m][j]) || pd.Distinct != distinct[m][j] {
				t.Errorf("%s %s: entropy %v distinct %d, want %v %d", md.Name, pd.ProblemID, pd.Entropy, pd.Distinct, want[m][j], distinct[m][j])
			}
		}
	}
	if d.Models[0].NoAnswer != 1 || len(d.Pairs) != 1 || d.Pairs[0].Lower != 3 || !near(d.Models[1].MeanEntropy, (1+0.8112781244591328)/3) {
		t.Errorf("summary %+v %+v", d.Models[0], d.Pairs)
	}
	// Support at ε = 0: base solves p1, p2; RL p1, p2, p3 -> preserved 2, expanded 1 (p3:
	// 0/4 vs 1/4, Fisher p = 1: could be luck).
	s := rep.Support.Pairs[0]
	if s.Preserved != 2 || s.Expanded != 1 || s.Shrunk != 0 || !s.ExpandedTests[0].CouldBeLuck || *s.Retention != 1 {
		t.Errorf("support %+v", s)
	}
}

// Labels without a judge: the report has reasoning figures once a person
// labels a solved sample (store.HasSolveLabels, an EXISTS over the labels
// instead of counting every sample).
func TestLabelsWithoutJudge(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	id, _ := e.debateFixture(t)
	rep, err := analysis.Build(ctx, e.st, id)
	if err != nil {
		t.Fatal(err)
	}
	if has, err := e.st.HasSolveLabels(ctx, id); err != nil || has || rep.CoT.Status != analysis.DebateNone {
		t.Fatalf("before labels: %v, %v, reasoning %s", has, err, rep.CoT.Status)
	}
	// Base p1 #0 is a solve.
	l := store.ReasoningLabel{ComparisonID: id, RunID: rep.Models[0].RunID, ProblemID: problemID(t, e, id, "p1"), SampleIndex: 0, Label: "valid"}
	if err := e.st.SetReasoningLabel(ctx, l); err != nil {
		t.Fatal(err)
	}
	rep, err = analysis.Build(ctx, e.st, id)
	if err != nil {
		t.Fatal(err)
	}
	if has, err := e.st.HasSolveLabels(ctx, id); err != nil || !has || rep.CoT.Status == analysis.DebateNone {
		t.Fatalf("with a label: %v, %v, reasoning %s", has, err, rep.CoT.Status)
	}
}

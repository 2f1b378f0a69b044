package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/internal/testfiles"
)

// gsm8kRow is one problem of the GSM8K pair's files.
type gsm8kRow struct {
	QID      int    `json:"qid"`
	Question string `json:"question"`
	NCorrect int    `json:"n_correct"`
	NRoll    int    `json:"n_rollouts"`
	Rollouts []struct {
		Text    string `json:"text"`
		Correct bool   `json:"correct"`
	} `json:"rollouts"`
}

func readGSM8KRows(t *testing.T, path string) []gsm8kRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []gsm8kRow
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r gsm8kRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b gsm8kRow) int { return a.QID - b.QID })
	return out
}

// The GSM8K PPO trajectory as verl dumps validation generations, one
// {step}.jsonl per step (RayPPOTrainer._dump_generations: input, output,
// score, step), given as one --model folder: four checkpoints whose pass@1
// and problems gained and lost per step are what the files say. The same
// run as the step-N/ folders it comes in gives the same checkpoints.
func TestTrainingRunFolder(t *testing.T) { testTrainingRunFolder(t) }

// TestTrainingRunFolderUnlicensed is TestTrainingRunFolder on the real
// GSM8K trajectory where the unlicensed folder is present.
func TestTrainingRunFolderUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testTrainingRunFolder(t)
}

func testTrainingRunFolder(t *testing.T) {
	src := testfiles.GSM8KProbe(t)
	_, url := testdb.New(t)
	steps := []int{100, 300, 500, 1000}
	dump := t.TempDir()
	own := map[int][]gsm8kRow{}
	for _, step := range steps {
		own[step] = readGSM8KRows(t, filepath.Join(src, fmt.Sprintf("trajectory/step-%d/rl_raw.jsonl", step)))
		if err := os.WriteFile(filepath.Join(dump, fmt.Sprintf("%d.jsonl", step)), verlDump(own[step], step), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := readGSM8KRows(t, filepath.Join(src, "results_2048_batched/sft_raw.jsonl"))
	dataset := filepath.Join(src, "data/gsm8k_subset.jsonl")
	sft := filepath.Join(src, "results_2048_batched/sft_raw.jsonl")
	for i, tc := range []struct {
		name string
		args []string
	}{
		{"verl dump folder", []string{"--model", "ppo=" + dump}},
		{"step-N folders", []string{"--model", "ppo=" + filepath.Join(src, "trajectory"), "--accept-guess"}},
	} {
		var out bytes.Buffer
		args := append([]string{"--dataset", dataset, "--base", "SFT=" + sft, "--name", tc.name, "--wait", "--accept-guess", "--database-url", url}, tc.args...)
		if err := runImport(context.Background(), args, &out); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, out.String())
		}
		st, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := analysis.Build(context.Background(), st, int64(i+1))
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Models) != 5 || len(rep.Trajectory) != 5 {
			t.Fatalf("%s: %d models, %d trajectory points; want the base model and 4 checkpoints", tc.name, len(rep.Models), len(rep.Trajectory))
		}
		if rep.Dynamics == nil || rep.Dynamics.Label == "pending" {
			t.Errorf("%s: two-stage view %+v after --wait (the statistics are computed)", tc.name, rep.Dynamics)
		} else {
			t.Logf("%s: %s", tc.name, rep.Dynamics.Text)
		}
		prev := base
		for j, step := range steps {
			tp := rep.Trajectory[j+1]
			rows := own[step]
			var p1 float64
			var gained, lost []string
			for q, r := range rows {
				p1 += float64(r.NCorrect) / float64(r.NRoll) / float64(len(rows))
				now, before := r.NCorrect > 0, prev[q].NCorrect > 0
				switch {
				case now && !before:
					gained = append(gained, fmt.Sprint(r.QID))
				case !now && before:
					lost = append(lost, fmt.Sprint(r.QID))
				}
			}
			if tp.Step != step || tp.Model != fmt.Sprintf("ppo step %d", step) || math.Abs(tp.Pass1-p1) > 1e-12 {
				t.Errorf("%s: point %d: %s step %d pass@1 %.6f; want ppo step %d, %.6f", tc.name, j+1, tp.Model, tp.Step, tp.Pass1, step, p1)
			}
			if !slices.Equal(tp.Gained, nonNil(gained)) || !slices.Equal(tp.Lost, nonNil(lost)) {
				t.Errorf("%s: step %d: gained %v lost %v; the files give %v, %v", tc.name, step, tp.Gained, tp.Lost, gained, lost)
			}
			t.Logf("%s: step %d pass@1 %.4f gained %v lost %v regained %v", tc.name, step, tp.Pass1, tp.Gained, tp.Lost, tp.Regained)
			prev = rows
		}
	}
	// --step after a training run's folder is refused: the steps come from the names.
	err := runImport(context.Background(), []string{"--dataset", dataset, "--base", "SFT=" + sft, "--model", "ppo=" + dump, "--step", "5",
		"--name", "x", "--database-url", url}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "take their steps from the file names") {
		t.Errorf("--step after a folder: %v", err)
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// verlDump is rows' rollouts as verl's validation dump of step writes them.
func verlDump(rows []gsm8kRow, step int) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, r := range rows {
		for _, ro := range r.Rollouts {
			score := 0.0
			if ro.Correct {
				score = 1
			}
			_ = enc.Encode(map[string]any{"input": "<|im_start|>user\n" + r.Question + "\nPut the final answer in \\boxed{}.<|im_end|>\n<|im_start|>assistant\n",
				"output": ro.Text, "score": score, "step": step})
		}
	}
	return b.Bytes()
}

// --follow adds a step file the trainer writes later as a new checkpoint,
// not before the file is complete, and Ctrl-C stops it keeping everything.
func TestFollowTrainingRun(t *testing.T) {
	src := testfiles.GSM8KProbe(t)
	_, url := testdb.New(t)
	dump := t.TempDir()
	write := func(step int) []byte {
		return verlDump(readGSM8KRows(t, filepath.Join(src, fmt.Sprintf("trajectory/step-%d/rl_raw.jsonl", step))), step)
	}
	for _, step := range []int{100, 300} {
		if err := os.WriteFile(filepath.Join(dump, fmt.Sprintf("%d.jsonl", step)), write(step), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runImport(ctx, []string{"--dataset", filepath.Join(src, "data/gsm8k_subset.jsonl"), "--base", "SFT=" + filepath.Join(src, "results_2048_batched/sft_raw.jsonl"),
			"--accept-guess", "--model", "ppo=" + dump, "--name", "followed", "--wait", "--follow", "--follow-every", "400ms", "--database-url", url}, out)
	}()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	checkpoints := func() (int, string) {
		c, err := st.GetComparison(context.Background(), 1)
		if err != nil {
			return 0, ""
		}
		return len(c.Runs) - 1, c.Status
	}
	// Ready with n checkpoints, and the command has said so (it prints the
	// id once the first ones are in, each later step once it is).
	waitFor := func(what string, n int, said string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			if got, status := checkpoints(); got == n && status == store.StatusReady && strings.Contains(out.String(), said) {
				return
			}
			select {
			case err := <-done:
				t.Fatalf("reach import stopped waiting for %s: %v\n%s", what, err, out.String())
			default:
			}
			if time.Now().After(deadline) {
				got, status := checkpoints()
				t.Fatalf("%s: %d checkpoints, %s after a minute", what, got, status)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("the first two steps", 2, "1\n")
	// The trainer writes step 500 slowly: half, a pause longer than --follow-every's settling, the rest.
	body := write(500)
	f, err := os.Create(filepath.Join(dump, "500.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	half := bytes.LastIndexByte(body[:len(body)/2], '\n') + 1
	_, _ = f.Write(body[:half])
	time.Sleep(250 * time.Millisecond)
	_, _ = f.Write(body[half:])
	f.Close()
	waitFor("step 500", 3, "step 500 added to comparison 1")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("reach import --follow after Ctrl-C: %v", err)
	}
	rep, err := analysis.Build(context.Background(), st, 1)
	if err != nil {
		t.Fatal(err)
	}
	last := rep.Models[len(rep.Models)-1]
	if last.Name != "ppo step 500" || last.N != 8 || len(rep.Trajectory) != 4 {
		t.Errorf("added checkpoint %s n = %d, trajectory of %d points; want ppo step 500 with all 8 samples, 4 points", last.Name, last.N, len(rep.Trajectory))
	}
	if !strings.Contains(out.String(), "step 500 added to comparison 1") {
		t.Errorf("output %q", out.String())
	}
}

// syncBuffer is a bytes.Buffer safe to write from one goroutine while
// another reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A TRL run's completions folder (completions/completions_{step:05d}.jsonl,
// GRPOTrainer's table as JSON lines) given as one --model: one checkpoint
// per step file, the step from the name.
func TestTrainingRunTRLFolder(t *testing.T) {
	tools := filepath.Join("..", "..", "internal", "ingest", "testdata", "tools")
	_, url := testdb.New(t)
	run := filepath.Join(t.TempDir(), "completions")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(tools, "trl_completions_00040.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []int{40, 80} {
		body := strings.ReplaceAll(string(data), `"step": 40`, fmt.Sprintf(`"step": %d`, step))
		if err := os.WriteFile(filepath.Join(run, fmt.Sprintf("completions_%05d.jsonl", step)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	err = runImport(context.Background(), []string{"--dataset", filepath.Join(tools, "dataset_words.jsonl"), "--base", "base=" + filepath.Join(tools, "vllm_outputs.jsonl"),
		"--model", "grpo=" + run, "--name", "trl", "--wait", "--database-url", url}, &out)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.GetComparison(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range c.Runs {
		step := "-"
		if r.Step != nil {
			step = fmt.Sprint(*r.Step)
		}
		got = append(got, r.ModelName+"@"+step)
	}
	if want := "base@- grpo step 40@40 grpo step 80@80"; strings.Join(got, " ") != want {
		t.Errorf("runs %q; want %q", strings.Join(got, " "), want)
	}
}

// A step file --follow cannot add (a record whose prompt matches no problem
// of the dataset: its import fails and the step is taken out) is said to
// have failed, not to be added; it stays reported as failed (the page's
// follow line, the report's failed steps) after a later step goes in; and
// once the trainer rewrites it, it is tried again and goes in.
func TestFollowFailedStep(t *testing.T) {
	src := testfiles.GSM8KProbe(t)
	_, url := testdb.New(t)
	dump := t.TempDir()
	rows := func(step int) []gsm8kRow {
		return readGSM8KRows(t, filepath.Join(src, fmt.Sprintf("trajectory/step-%d/rl_raw.jsonl", step)))
	}
	put := func(step int, body []byte) {
		t.Helper()
		// Written aside and renamed in, as a whole: the follow reads it once settled.
		tmp := filepath.Join(t.TempDir(), "step")
		if err := os.WriteFile(tmp, body, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dump, fmt.Sprintf("%d.jsonl", step))); err != nil {
			t.Fatal(err)
		}
	}
	put(100, verlDump(rows(100), 100))
	put(300, verlDump(rows(300), 300))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runImport(ctx, []string{"--dataset", filepath.Join(src, "data/gsm8k_subset.jsonl"), "--base", "SFT=" + filepath.Join(src, "results_2048_batched/sft_raw.jsonl"),
			"--accept-guess", "--model", "ppo=" + dump, "--name", "followed", "--wait", "--follow", "--follow-every", "400ms", "--database-url", url}, out)
	}()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	models := func() (string, string) {
		c, err := st.GetComparison(context.Background(), 1)
		if err != nil {
			return "", ""
		}
		var names []string
		for _, r := range c.Runs[1:] {
			names = append(names, r.ModelName)
		}
		return strings.Join(names, ", "), c.Status
	}
	lastError := func() string {
		f, err := st.LatestFollow(context.Background(), 1)
		if err != nil {
			return ""
		}
		return f.LastError
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !ok() {
			select {
			case err := <-done:
				t.Fatalf("reach import stopped waiting for %s: %v\n%s", what, err, out.String())
			default:
			}
			if time.Now().After(deadline) {
				got, status := models()
				t.Fatalf("%s: not after a minute; models %s, %s; follow's error %q; output %q", what, got, status, lastError(), out.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	ready := func(want string) func() bool {
		return func() bool { got, status := models(); return got == want && status == store.StatusReady }
	}
	waitFor("the first two steps", func() bool { return ready("ppo step 100, ppo step 300")() && strings.Contains(out.String(), "1\n") })

	// Step 400 with one record's prompt matching no problem.
	bad := rows(500)
	bad[0].Question = "What is the airspeed of an unladen swallow, in furlongs a fortnight?"
	put(400, verlDump(bad, 400))
	waitFor("step 400 to fail", func() bool { return strings.Contains(lastError(), "step 400 not added: 400.jsonl:") })
	waitFor("the comparison ready again without step 400", ready("ppo step 100, ppo step 300"))

	put(500, verlDump(rows(500), 500))
	waitFor("step 500", func() bool {
		return ready("ppo step 100, ppo step 300, ppo step 500")() && strings.Contains(out.String(), "step 500 added to comparison 1")
	})
	if strings.Contains(out.String(), "step 400 added") {
		t.Errorf("a step whose import failed reported as added: %q", out.String())
	}
	// After a later step went in, step 400 is still said to have failed.
	if e := lastError(); !strings.Contains(e, "step 400 not added: 400.jsonl:") {
		t.Errorf("after step 500 went in, the follow's error %q does not name step 400", e)
	}
	rep, err := analysis.Build(context.Background(), st, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.FailedSteps) != 1 || rep.FailedSteps[0].Step != 400 || !strings.Contains(rep.FailedSteps[0].Error, "400.jsonl:") {
		t.Errorf("the report's failed steps %+v; want step 400 with its file's error", rep.FailedSteps)
	}
	// Left as it is, step 400 is not tried again.
	time.Sleep(2 * time.Second)
	if got, _ := models(); got != "ppo step 100, ppo step 300, ppo step 500" {
		t.Errorf("step 400 unchanged: models %s", got)
	}

	// The trainer rewrites step 400 whole: it is tried again and goes in.
	put(400, verlDump(rows(500), 400))
	waitFor("step 400 fixed", func() bool {
		return ready("ppo step 100, ppo step 300, ppo step 500, ppo step 400")() && strings.Contains(out.String(), "step 400 added to comparison 1")
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("reach import --follow after Ctrl-C: %v", err)
	}
	if e := lastError(); strings.Contains(e, "step 400") {
		t.Errorf("step 400 went in; the follow still says %q", e)
	}
	if rep, err = analysis.Build(context.Background(), st, 1); err != nil {
		t.Fatal(err)
	}
	if len(rep.FailedSteps) != 0 {
		t.Errorf("failed steps after step 400 went in: %+v", rep.FailedSteps)
	}
}

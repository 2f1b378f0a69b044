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
	"testing"

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
		rows := readGSM8KRows(t, filepath.Join(src, fmt.Sprintf("trajectory/step-%d/rl_raw.jsonl", step)))
		own[step] = rows
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
		if err := os.WriteFile(filepath.Join(dump, fmt.Sprintf("%d.jsonl", step)), b.Bytes(), 0o644); err != nil {
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

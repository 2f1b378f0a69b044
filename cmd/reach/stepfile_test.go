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
)

// ownPass1 is pass@1 per training step computed from a file of records
// carrying a step: per step, the mean over problems (told apart by their
// prompt) of the share of correct samples.
func ownPass1(t *testing.T, path, promptField string, correct func(map[string]any) bool) map[int]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type nc struct{ n, c int }
	by := map[int]map[string]*nc{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		var step int
		switch v := rec["step"].(type) {
		case float64:
			step = int(v)
		case string:
			fmt.Sscan(v, &step)
		}
		if by[step] == nil {
			by[step] = map[string]*nc{}
		}
		p := rec[promptField].(string)
		if by[step][p] == nil {
			by[step][p] = &nc{}
		}
		by[step][p].n++
		if correct(rec) {
			by[step][p].c++
		}
	}
	out := map[int]float64{}
	for step, probs := range by {
		for _, x := range probs {
			out[step] += float64(x.c) / float64(x.n) / float64(len(probs))
		}
	}
	return out
}

// One file whose records carry the training step (verl's validation dump
// of three steps in one file; TRL's completions table of a whole run, its
// step a string) given as one --model: one checkpoint per step, named
// NAME step N with its step, each with the pass@1 its records give. Read
// from this process's disk and as an upload (--upload), the file is read
// once by the import and each sample goes to its step's checkpoint.
func TestImportOneFileOfSteps(t *testing.T) {
	tools := filepath.Join("..", "..", "internal", "ingest", "testdata", "tools")
	_, url := testdb.New(t)
	dataset, base := filepath.Join(tools, "dataset_words.jsonl"), filepath.Join(tools, "vllm_outputs.jsonl")
	verl, trl := filepath.Join(tools, "verl_val_steps.jsonl"), filepath.Join(tools, "trl_completions_steps.jsonl")
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id := int64(0)
	for _, tc := range []struct {
		name, file string
		extra      []string
		own        map[int]float64
	}{
		{"verl", verl, nil, ownPass1(t, verl, "input", func(r map[string]any) bool { return r["acc"] == true })},
		{"verl upload", verl, []string{"--upload"}, ownPass1(t, verl, "input", func(r map[string]any) bool { return r["acc"] == true })},
		{"trl", trl, nil, ownPass1(t, trl, "prompt", func(r map[string]any) bool { return r["accuracy_reward"] == 1.0 })},
	} {
		var out bytes.Buffer
		args := append([]string{"--dataset", dataset, "--base", "base=" + base, "--model", "ppo=" + tc.file, "--name", tc.name, "--wait", "--database-url", url}, tc.extra...)
		if err := runImport(context.Background(), args, &out); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		id++
		c, err := st.GetComparison(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		var steps []int
		for s := range tc.own {
			steps = append(steps, s)
		}
		slices.Sort(steps)
		var got, want []string
		for _, r := range c.Runs {
			step := "-"
			if r.Step != nil {
				step = fmt.Sprint(*r.Step)
			}
			got = append(got, fmt.Sprintf("%s@%s/%s", r.ModelName, step, r.Role))
		}
		want = append(want, "base@-/base")
		for _, s := range steps {
			want = append(want, fmt.Sprintf("ppo step %d@%d/checkpoint", s, s))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: runs %v; want %v", tc.name, got, want)
		}
		rep, err := analysis.Build(context.Background(), st, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Trajectory) != len(steps)+1 {
			t.Errorf("%s: trajectory of %d points; want the base model and %d checkpoints", tc.name, len(rep.Trajectory), len(steps))
			continue
		}
		for i, s := range steps {
			tp := rep.Trajectory[i+1]
			if tp.Step != s || math.Abs(tp.Pass1-tc.own[s]) > 1e-12 || tp.Model != fmt.Sprintf("ppo step %d", s) {
				t.Errorf("%s: point %d: %s step %d pass@1 %.6f; the file gives step %d pass@1 %.6f", tc.name, i+1, tp.Model, tp.Step, tp.Pass1, s, tc.own[s])
			}
			t.Logf("%s: step %d pass@1 %.4f (the file: %.4f)", tc.name, tp.Step, tp.Pass1, tc.own[s])
		}
	}

	// Refused in words before anything is stored: a record without its
	// step (named by its line), the base model's file of several steps,
	// more steps than a comparison's models; and by its import, a --step
	// given to such a file.
	data, err := os.ReadFile(verl)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines[9] = strings.Replace(lines[9], `, "step": 200`, "", 1)
	mixed := filepath.Join(t.TempDir(), "run.jsonl")
	if err := os.WriteFile(mixed, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	// 64 steps, and the base model: 65 models.
	var many strings.Builder
	for step := range 64 {
		many.WriteString(strings.Replace(lines[0], `"step": 100`, fmt.Sprintf(`"step": %d`, 10*step), 1))
	}
	long := filepath.Join(t.TempDir(), "long_run.jsonl")
	if err := os.WriteFile(long, []byte(many.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--base", "base=" + base, "--model", "ppo=" + mixed}, "run.jsonl:10: step: no training step, while line 1 carries step 100"},
		{[]string{"--base", "base=" + base, "--model", "ppo=" + long}, "carry 64 training steps (0 to 630), one checkpoint each; a comparison has at most 64 models"},
		{[]string{"--base", "base=" + verl, "--model", "ppo=" + trl}, `base model "base": the records of verl_val_steps.jsonl carry 3 training steps (100 to 300)`},
		{[]string{"--base", "base=" + base, "--model", "ppo=" + verl, "--step", "7"}, `verl_val_steps.jsonl:9: step: training step 200, while line 1 carries step 100: model "ppo" is given step 7`},
	} {
		args := append([]string{"--dataset", dataset, "--name", "refused", "--database-url", url}, tc.args...)
		err := runImport(context.Background(), args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want %q", tc.args, err, tc.want)
		}
	}
	if list, err := st.ListComparisons(context.Background()); err == nil && len(list) != 4 {
		t.Errorf("%d comparisons after the refusals; want the 3 imported and the one whose import failed", len(list))
	}
}

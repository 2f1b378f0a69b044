package jobs_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/examples"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/store"
)

// Issue 9, case 9, through import (real Postgres + River): on the shipped
// HumanEval pair the base model is ahead only at k = 1 (32.50 vs 32.38), so
// the label names the RL model's lead, never a base crossover.
func TestHumanEvalCrossoverLabelImported(t *testing.T) {
	e := start(t)
	for _, spec := range examples.Specs() {
		if !strings.HasPrefix(spec.Name, "HumanEval") {
			continue
		}
		rep := e.importReady(t, spec)
		if got := rep.Pairs[0].Crossover.Label; got != "RL model ahead from k = 2; base model ahead only at k = 1" {
			t.Errorf("crossover label %q; want the RL model ahead from k = 2, the base only at k = 1", got)
		}
		return
	}
	t.Fatal("no shipped HumanEval example")
}

// Issue 9, case 11, through import: lm-eval files that carry their
// questions, given with another dataset, fail naming the mismatch; nothing
// is kept.
func TestDatasetMismatchRefusedOnImport(t *testing.T) {
	dir := toolFormats(t)
	e := start(t)
	base, rl := pairFiles(t, dir, "a_lmeval_*_samples_gsm8k_*")
	id, _, err := intake.Create(context.Background(), e.st, e.client, intake.Spec{Name: "wrong dataset",
		Dataset: intake.LocalFile(filepath.Join(dir, "ds_math500_3.jsonl")),
		Models:  []intake.Model{{Name: "base", File: intake.LocalFile(base)}, {Name: "rl", File: intake.LocalFile(rl)}}})
	if err != nil {
		if !strings.Contains(err.Error(), "differs") && !strings.Contains(err.Error(), "not in the dataset") {
			t.Fatalf("refused at once, but not for the mismatch: %v", err)
		}
		return
	}
	c := e.wait(t, id)
	if c.Status != store.StatusFailed || !(strings.Contains(c.Error, "differs") || strings.Contains(c.Error, "not in the dataset")) {
		t.Fatalf("status %s, error %q; want failed naming the mismatch", c.Status, c.Error)
	}
	for _, r := range c.Runs {
		if n, _, err := e.st.CountSamples(context.Background(), r.ID); err != nil || n != 0 {
			t.Errorf("run %s kept %d samples (%v)", r.ModelName, n, err)
		}
	}
}

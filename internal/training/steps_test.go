package training

import (
	"slices"
	"strings"
	"testing"
)

func TestStepOf(t *testing.T) {
	for rel, want := range map[string]int{
		"100.jsonl":                             100, // verl validation dump
		"0.jsonl.gz":                            0,
		"completions/completions_00040.parquet": 40, // TRL
		"media/table/completions_40_0123abcd4567ef890123.table.json": 40, // TRL via wandb
		"step-300/rl_raw.jsonl":       300,
		"global_step_1000/val.jsonl":  1000,
		"checkpoint-50/samples.jsonl": 50,
		"run/iter_0000200/out.jsonl":  200,
		"Step_7/x.parquet":            7,
	} {
		if got, ok := StepOf(rel); !ok || got != want {
			t.Errorf("StepOf(%q) = %d, %v; want %d", rel, got, ok, want)
		}
	}
	// Seeds, repeats and dates are not steps.
	for _, rel := range []string{"output-rs0.jsonl", "rep1/samples.jsonl", "samples_gsm8k_2026-01-02T03-04-05.jsonl", "seed_3/out.jsonl", "results.json", "v2/step.jsonl", "2024/out.jsonl", "matharena_runs/1.json", "runs/3.json.zst"} {
		if s, ok := StepOf(rel); ok {
			t.Errorf("StepOf(%q) = %d; want no step", rel, s)
		}
	}
}

func TestSplit(t *testing.T) {
	cks, err := Split("/runs/ppo", []string{"/runs/ppo/step-100/a.jsonl", "/runs/ppo/step-100/b.jsonl", "/runs/ppo/step-20/a.jsonl"})
	if err != nil || len(cks) != 2 || cks[0].Step != 20 || cks[1].Step != 100 || !slices.Equal(cks[1].Files, []string{"/runs/ppo/step-100/a.jsonl", "/runs/ppo/step-100/b.jsonl"}) {
		t.Fatalf("Split = %+v, %v", cks, err)
	}
	// One step, or none: the files are one model.
	if cks, err := Split("/d", []string{"/d/output-rs0.jsonl", "/d/output-rs1.jsonl"}); cks != nil || err != nil {
		t.Errorf("seeds: %+v, %v", cks, err)
	}
	if cks, err := Split("/d", []string{"/d/100.jsonl"}); cks != nil || err != nil {
		t.Errorf("one step: %+v, %v", cks, err)
	}
	// The folder the user named never counts: /ckpt/step-5 given as the root holds one model.
	if cks, _ := Split("/ckpt/step-5", []string{"/ckpt/step-5/a.jsonl", "/ckpt/step-5/b.jsonl"}); cks != nil {
		t.Errorf("root's own name read as a step: %+v", cks)
	}
	// A file beside the steps that names none is refused, by name.
	_, err = Split("/d", []string{"/d/100.jsonl", "/d/200.jsonl", "/d/README.md"})
	if err == nil || !strings.Contains(err.Error(), "README.md names no training step") {
		t.Errorf("stray file: %v", err)
	}
}

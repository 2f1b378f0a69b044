package ingest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// Records carrying a training step, as verl (a number) and TRL (a string
// of digits) write it: each sample reports its record's step, ScanSteps
// lists them, and a record without one among records with one is refused
// by its line.
func TestScanSteps(t *testing.T) {
	for _, tc := range []struct {
		file   string
		format Format
		steps  []int
	}{
		{"verl_val_steps.jsonl", FormatVerlValidation, []int{100, 200, 300}},
		{"trl_completions_steps.jsonl", FormatTRLCompletions, []int{40, 80}},
		{"verl_val_150.jsonl", FormatVerlValidation, []int{150}},
		{"trl_completions_00040.jsonl", FormatTRLCompletions, []int{40}},
		{"completions_40_0123abcd4567ef890123.table.json", FormatWandbTable, []int{40}},
		{"vllm_outputs.jsonl", FormatVLLM, nil},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "tools", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ScanSteps(bytes.NewReader(data), tc.file, tc.format, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if !slices.Equal(got.Steps, tc.steps) || got.Distinct != len(tc.steps) {
			t.Errorf("%s: steps %v (%d distinct); want %v", tc.file, got.Steps, got.Distinct, tc.steps)
		}
	}
	data, err := os.ReadFile(filepath.Join("testdata", "tools", "verl_val_steps.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines[6] = strings.Replace(lines[6], `, "step": 100`, "", 1)
	_, err = ScanSteps(strings.NewReader(strings.Join(lines, "")), "run.jsonl", FormatVerlValidation, nil)
	var ie *Error
	if !errors.As(err, &ie) || ie.Line != 7 || !strings.Contains(err.Error(), "line 1 carries step 100") {
		t.Errorf("a line without its step: %v", err)
	}
	// The first lines without a step, a later one with: the first without is named.
	lines = strings.SplitAfter(string(data), "\n")
	for i := range 3 {
		lines[i] = strings.Replace(lines[i], `, "step": 100`, "", 1)
	}
	_, err = ScanSteps(strings.NewReader(strings.Join(lines, "")), "run.jsonl", FormatVerlValidation, nil)
	if !errors.As(err, &ie) || ie.Line != 1 || !strings.Contains(err.Error(), "line 4 carries step 100") {
		t.Errorf("lines without steps first: %v", err)
	}
	bad := strings.Replace(string(data), `"step": 200`, `"step": "two hundred"`, 1)
	if _, err := ScanSteps(strings.NewReader(bad), "run.jsonl", FormatVerlValidation, nil); err == nil || !strings.Contains(err.Error(), "run.jsonl:9: step: training step") {
		t.Errorf("a step that is not a number: %v", err)
	}
}

// TRL's completions table of several logging steps as parquet, its step
// column strings as GRPOTrainer writes them (str(self.state.global_step)).
func TestScanStepsParquet(t *testing.T) {
	type row struct {
		Step           string  `parquet:"step"`
		Prompt         string  `parquet:"prompt"`
		Completion     string  `parquet:"completion"`
		AccuracyReward float64 `parquet:"accuracy_reward"`
		Advantage      float64 `parquet:"advantage"`
	}
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	var rows []row
	for _, step := range []string{"40", "80", "120"} {
		for _, p := range words {
			rows = append(rows, row{Step: step, Prompt: "<|user|>" + p.Statement + "<|assistant|>", Completion: "The answer is \\boxed{" + p.Reference + "}."})
		}
	}
	var b bytes.Buffer
	if err := parquet.Write(&b, rows); err != nil {
		t.Fatal(err)
	}
	ex, err := Examine(bytes.NewReader(b.Bytes()), "completions.parquet")
	if err != nil || ex.Format != FormatTRLCompletions {
		t.Fatalf("Examine: %s %v", ex.Format, err)
	}
	got, err := ScanSteps(bytes.NewReader(b.Bytes()), "completions.parquet", ex.Format, nil)
	if err != nil || !slices.Equal(got.Steps, []int{40, 80, 120}) || got.Samples != 3*len(words) {
		t.Errorf("steps %+v, %v", got, err)
	}
}

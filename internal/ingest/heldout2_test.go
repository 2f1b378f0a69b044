package ingest

import (
	"path/filepath"
	"slices"
	"testing"
)

// heldAside2 reads the held-aside fixtures of issue 21 item 5's second set of readers (OpenRLHF,
// simple-evals, LiveCodeBench, DeepSeek-Math), written from the writers' code before the readers
// and not looked at while making them.
func heldAside2(t *testing.T) {
	math := readDatasetFile(t, filepath.Join(toolsDir, "dataset_math.jsonl"))
	code := readDatasetFile(t, filepath.Join(toolsDir, "dataset_code.jsonl"))
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	lcb := readDatasetFile(t, filepath.Join(toolsDir, "dataset_lcb.jsonl"))
	t.Run("OpenRLHF rm output: a reward model's score is no verdict", func(t *testing.T) {
		got, err := importFile(t, filepath.Join(toolsDir, "heldout_openrlhf_rm_output.jsonl"), math)
		if err != nil || got.format != FormatOpenRLHF || !slices.Equal(got.n, []int{3, 3, 3, 0, 0, 0, 0, 0}) || got.labels != 0 || got.how != "by statement" {
			t.Fatalf("%s n %v labels %d %s: %v", got.format, got.n, got.labels, got.how, err)
		}
	})
	t.Run("simple-evals HumanEval allresults, 3 samples per convo", func(t *testing.T) {
		got, err := importFile(t, filepath.Join(toolsDir, "heldout_humaneval_gpt-own_20260102_030405_allresults.json"), code)
		if err != nil || got.format != FormatSimpleEvals || !slices.Equal(got.n, []int{3, 3}) || !slices.Equal(got.c, []int{2, 2}) || got.labels != 6 {
			t.Fatalf("%s n %v c %v labels %d: %v", got.format, got.n, got.c, got.labels, err)
		}
	})
	t.Run("LiveCodeBench eval_all without metadata", func(t *testing.T) {
		got, err := importFile(t, filepath.Join(toolsDir, "heldout_livecodebench_codegeneration_3_0.2_eval_all.json"), lcb)
		if err != nil || got.format != FormatLiveCodeBench || !slices.Equal(got.n, []int{3, 3, 3}) || !slices.Equal(got.c, []int{2, 2, 1}) || got.how != "by id" {
			t.Fatalf("%s n %v c %v %s: %v", got.format, got.n, got.c, got.how, err)
		}
	})
	t.Run("DeepSeek-Math GSM8K, two subsets", func(t *testing.T) {
		dir := filepath.Join(toolsDir, "heldout_deepseek_math", "gsm8k-test", "infer_logs", "cot", "samples")
		got, err := importFile(t, filepath.Join(dir, "predictions.json"), words)
		if err != nil || got.format != FormatDeepSeekMath || !slices.Equal(got.n, []int{1, 1, 1, 1}) || !slices.Equal(got.c, []int{1, 1, 1, 0}) {
			t.Fatalf("%s n %v c %v: %v", got.format, got.n, got.c, err)
		}
		pooled, files, err := importPooled(t, filepath.Join(dir, "predictions.*.json"), words, nil)
		if err != nil || len(files) != 2 || !slices.Equal(pooled.n, []int{1, 1, 1, 1}) || !slices.Equal(pooled.c, []int{1, 1, 1, 0}) {
			t.Fatalf("subsets %v: n %v c %v: %v", files, pooled.n, pooled.c, err)
		}
	})
}

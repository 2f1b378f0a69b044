package ingest

import (
	"path/filepath"
	"slices"
	"testing"
)

// Issue 21's held-aside fixtures (testdata/tools/heldout_*), written before the fixes and not
// looked at while making them: one per kind, each read as an import reads it.
func TestHeldAsideFixtures(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	code := readDatasetFile(t, filepath.Join(toolsDir, "dataset_code.jsonl"))
	math := readDatasetFile(t, filepath.Join(toolsDir, "dataset_math.jsonl"))
	t.Run("TRL plain prompt, another template, mapping without prompt", func(t *testing.T) {
		got, err := importMapped(t, filepath.Join(toolsDir, "heldout_trl_completions_00120.jsonl"), words,
			&Mapping{Completion: "completion", Correct: "correctness_reward_func", Threshold: 1})
		if err != nil || !slices.Equal(got.n, []int{3, 3, 3, 3}) || !slices.Equal(got.c, []int{2, 2, 2, 2}) {
			t.Fatalf("n %v c %v %s: %v", got.n, got.c, got.how, err)
		}
		got, err = importFile(t, filepath.Join(toolsDir, "heldout_trl_completions_00120.jsonl"), words)
		if err != nil || got.format != FormatTRLCompletions || !slices.Equal(got.n, []int{3, 3, 3, 3}) {
			t.Fatalf("sniffed %s n %v: %v", got.format, got.n, err)
		}
	})
	t.Run("OpenCompass results n=3", func(t *testing.T) {
		got, err := importFile(t, filepath.Join(toolsDir, "heldout_opencompass_results_math_n3.json"), math)
		if err != nil || !slices.Equal(got.n, []int{3, 3, 3, 0, 0, 0, 0, 0}) || !slices.Equal(got.c, []int{1, 2, 2, 0, 0, 0, 0, 0}) {
			t.Fatalf("n %v c %v: %v", got.n, got.c, err)
		}
	})
	t.Run("BigCodeBench", func(t *testing.T) {
		got, err := importFile(t, filepath.Join(toolsDir, "heldout_bigcodebench_eval_results.json"), code)
		if err != nil || got.format != FormatBigCodeBench || !slices.Equal(got.n, []int{2, 2}) || !slices.Equal(got.c, []int{2, 1}) {
			t.Fatalf("%s n %v c %v: %v", got.format, got.n, got.c, err)
		}
	})
	t.Run("one folder per repeat", func(t *testing.T) {
		got, files, err := importPooled(t, filepath.Join(toolsDir, "heldout_repeats", "*", "samples.jsonl"), words, nil)
		if err != nil || len(files) != 2 || !slices.Equal(got.n, []int{4, 4, 4, 0}) || !slices.Equal(got.c, []int{2, 2, 2, 0}) {
			t.Fatalf("files %v n %v c %v: %v", files, got.n, got.c, err)
		}
	})
	// The NeMo-Skills, evalscope, SkyThought and MathArena readers' held-aside fixtures: another
	// version or option than the fixtures the readers were built on.
	t.Run("NeMo-Skills, LLM judge, parse_reasoning, 3 seeds", func(t *testing.T) {
		got, files, err := importPooled(t, filepath.Join(toolsDir, "heldout_nemo_skills_judge"), math, nil)
		if err != nil || len(files) != 3 || !slices.Equal(got.n, []int{3, 3, 3, 0, 0, 0, 0, 0}) || !slices.Equal(got.c, []int{2, 1, 2, 0, 0, 0, 0, 0}) {
			t.Fatalf("files %v n %v c %v: %v", files, got.n, got.c, err)
		}
	})
	t.Run("evalscope v1.0 review, input string, repeats 3", func(t *testing.T) {
		got, err := importFile(t, filepath.Join(toolsDir, "heldout_evalscope_gsm8k_main.jsonl"), words)
		if err != nil || !slices.Equal(got.n, []int{3, 3, 3, 3}) || !slices.Equal(got.c, []int{2, 2, 3, 1}) {
			t.Fatalf("%s n %v c %v: %v", got.format, got.n, got.c, err)
		}
	})
	t.Run("SkyThought, responses by temperature", func(t *testing.T) {
		got, err := importFile(t, filepath.Join(toolsDir, "heldout_skythought_results.json"), words)
		if err != nil || !slices.Equal(got.n, []int{2, 2, 2, 2}) || !slices.Equal(got.c, []int{1, 1, 1, 1}) {
			t.Fatalf("%s n %v c %v: %v", got.format, got.n, got.c, err)
		}
	})
	t.Run("MathArena first release, one file per problem", func(t *testing.T) {
		got, files, err := importPooled(t, filepath.Join(toolsDir, "heldout_matharena_runs"), words, nil)
		if err != nil || len(files) != 4 || !slices.Equal(got.n, []int{2, 2, 2, 2}) || !slices.Equal(got.c, []int{1, 2, 1, 1}) {
			t.Fatalf("files %v n %v c %v: %v", files, got.n, got.c, err)
		}
	})
	t.Run("OpenRLHF, simple-evals, LiveCodeBench, DeepSeek-Math", heldAside2)
}

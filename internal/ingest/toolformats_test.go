package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/testfiles"
)

// casesPath returns a path under the repository's cases (internal/testfiles, cases/).
func casesPath(t testing.TB, rel string) string {
	t.Helper()
	return testfiles.Path(t, "cases/"+rel)
}

// readDatasetFile reads a dataset as a Matcher needs it.
func readDatasetFile(t testing.TB, path string) []MatchProblem {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ps []MatchProblem
	err = ReadDataset(f, filepath.Base(path), func(p Problem) error {
		ps = append(ps, MatchProblem{Key: p.Key, Statement: p.Statement, Reference: p.Reference, Solution: p.Extra["solution"]})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// matched is what a samples file adds up to once matched to its dataset.
type matched struct {
	format  Format
	n, c    []int // per dataset problem: samples, samples the file calls correct
	labels  int   // samples with the file's own verdict
	meta    RunMeta
	how     string
	samples []Sample
}

// importFile sniffs a file as the upload does and reads it against a dataset through a Matcher.
func importFile(t testing.TB, path string, ds []MatchProblem) (matched, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	head := make([]byte, SniffBytes)
	k, _ := f.Read(head)
	name := filepath.Base(path)
	format, m, err := Sniff(head[:k], name)
	if err != nil {
		return matched{}, err
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	return readFileMatched(t, f, name, format, m, ds)
}

// importMapped reads a file with a mapping (as --map does) against a dataset through a Matcher.
func importMapped(t testing.TB, path string, ds []MatchProblem, m *Mapping) (matched, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return readFileMatched(t, f, filepath.Base(path), FormatMapped, m, ds)
}

func readFileMatched(t testing.TB, f io.Reader, name string, format Format, m *Mapping, ds []MatchProblem) (matched, error) {
	t.Helper()
	out := matched{format: format, n: make([]int, len(ds)), c: make([]int, len(ds))}
	mt := NewMatcher(name, ds, nil)
	err := Read(f, name, format, m, Options{
		OnSample: func(s Sample) error {
			p, err := mt.Resolve(&s)
			if err != nil {
				return err
			}
			out.n[p]++
			if s.Correct != nil {
				out.labels++
				if *s.Correct {
					out.c[p]++
				}
			}
			out.samples = append(out.samples, s)
			return nil
		},
		OnMeta: func(m RunMeta) error { out.meta = m; return nil },
	})
	if err == nil {
		err = mt.Finish()
	}
	out.how = mt.String()
	return out, err
}

// TestToolFormats reads every file of the carried cases/tool-formats as an upload would: each must be
// recognised without a mapping, match its dataset (3 problems, 4 samples each), and carry the file's
// own verdicts where the tool writes them (base 2/1/3 of 4, RL 4/0/4). Formats without verdicts are
// graded by Reach's verifier; the integration test in internal/jobs checks the final figures.
func TestToolFormats(t *testing.T) {
	dir := casesPath(t, "tool-formats")
	for _, tc := range []struct {
		glob, ds string
		format   Format
		verdicts bool
		how      string
		meta     func(RunMeta) bool
	}{
		{"a_lmeval_*_samples_math_500_*.jsonl", "ds_math500_3.jsonl", FormatLMEval, false, "by position",
			func(m RunMeta) bool {
				return m.Tool == "lm-evaluation-harness" && m.Task == "math_500" && m.Settings["temperature"] == "0.6" && m.Date == "2026-11-30T10-00-00.000000"
			}},
		{"a_lmeval_*_samples_gsm8k_*.jsonl", "ds_gsm8k_3.jsonl", FormatLMEval, false, "by position",
			func(m RunMeta) bool {
				return m.Task == "gsm8k_cot_self_consistency" && m.Settings["temperature"] == "0.2"
			}},
		{"b_lighteval_*_details_lighteval_*.parquet", "ds_math500_3.jsonl", FormatParquet, false, "by position", nil},
		{"b_lighteval_old_*.jsonl", "ds_math500_3.jsonl", FormatLighteval, false, "by statement", nil},
		{"c_inspect_*.eval", "ds_gsm8k_3.jsonl", FormatInspect, true, "by 1-based position",
			func(m RunMeta) bool {
				return m.Tool == "Inspect AI" && strings.HasPrefix(m.Model, "vllm/Qwen/Qwen2.5-7B") && m.Settings["temperature"] == "0.6" && m.Settings["epochs"] == "4"
			}},
		{"c_inspect_*.json", "ds_gsm8k_3.jsonl", FormatInspect, true, "by 1-based position", nil},
		{"f_verl_*_validation_200.jsonl", "ds_math500_3.jsonl", FormatVerlValidation, true, "by statement",
			func(m RunMeta) bool { return m.Tool == "verl" && m.Settings["step"] == "200" }},
		{"f_verl_main_generation_*.jsonl", "ds_math500_3.jsonl", FormatVerlGeneration, false, "by statement", nil},
		{"g_openai_batch_*_output.jsonl", "ds_math500_3.jsonl", FormatOpenAIBatch, false, "by id",
			func(m RunMeta) bool { return m.Model == "base" || m.Model == "rl" }},
		{"g_vllm_requestoutput_*.jsonl", "ds_math500_3.jsonl", FormatVLLM, false, "by position", nil},
	} {
		files, _ := filepath.Glob(filepath.Join(dir, tc.glob))
		if len(files) != 2 {
			t.Fatalf("%s: %d files, want a base and an RL file", tc.glob, len(files))
		}
		ds := readDatasetFile(t, filepath.Join(dir, tc.ds))
		for _, f := range files {
			t.Run(filepath.Base(f), func(t *testing.T) {
				got, err := importFile(t, f, ds)
				if err != nil {
					t.Fatal(err)
				}
				if got.format != tc.format || !slices.Equal(got.n, []int{4, 4, 4}) || got.how != tc.how {
					t.Errorf("format %s, samples per problem %v, matched %s; want %s, [4 4 4], %s", got.format, got.n, got.how, tc.format, tc.how)
				}
				want := []int{2, 1, 3}
				if strings.Contains(filepath.Base(f), "_rl") {
					want = []int{4, 0, 4}
				}
				if tc.verdicts && (got.labels != 12 || !slices.Equal(got.c, want)) {
					t.Errorf("file verdicts: %d labels, correct per problem %v, want 12, %v", got.labels, got.c, want)
				}
				if !tc.verdicts && got.labels != 0 {
					t.Errorf("%d file verdicts from a tool that writes none per sample", got.labels)
				}
				if tc.meta != nil && !tc.meta(got.meta) {
					t.Errorf("run metadata %+v", got.meta)
				}
				for _, s := range got.samples {
					if strings.TrimSpace(s.Completion) == "" || strings.Contains(s.Completion, "Convert the point $(0,3)$ in rectangular") {
						t.Errorf("sample %+v: completion is empty or the problem", s)
						break
					}
				}
			})
		}
	}
	// A dataset given as a model's samples is named for what it is, at once.
	_, err := importFile(t, filepath.Join(dir, "h_dataset_math5.jsonl"), nil)
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Msg, "a dataset (fields problem, solution, answer") {
		t.Errorf("dataset as samples: %v", err)
	}
}

// TestRepeatedProblemLines: the per-problem files with every problem twice (lm-eval writes each
// document once per filter) are refused naming the line and the repeated id; lm-eval's own layout,
// with the same document under two filters, takes each document's completions once.
func TestRepeatedProblemLines(t *testing.T) {
	dir := casesPath(t, "from-reports/lmeval-log-samples-dup")
	ds := readDatasetFile(t, filepath.Join(dir, "dataset.jsonl"))
	for _, tc := range []struct {
		file, field, msg string
		line             int
	}{
		{"base_reach_dup.jsonl", "problem_id", `problem "d0" is repeated: its samples were already on line 1`, 3},
		{"base_qwen_eval_dup.jsonl", "idx", `problem "0" is repeated: its samples were already on line 1`, 3},
		{"base_reach_dup_index.jsonl", "sample_index", `duplicate sample index 0 for problem "d0"`, 5},
	} {
		_, err := importFile(t, filepath.Join(dir, tc.file), ds)
		wantError(t, err, tc.line, tc.field, tc.msg)
	}
	for _, file := range []string{"base_samples.jsonl", "rl.jsonl"} {
		got, err := importFile(t, filepath.Join(dir, file), ds)
		if err != nil || !slices.Equal(got.n, []int{2, 2}) {
			t.Errorf("%s: samples per problem %v, %v; want [2 2]", file, got.n, err)
		}
	}
}

// TestSamplesOwnTheirText keeps every sample of every tool-formats file and real data file until
// the end of the read and compares it with a copy taken when it was delivered: a string that
// aliased the reader's reused line buffer would have changed.
func TestSamplesOwnTheirText(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(casesPath(t, "tool-formats"), "[a-g]_*"))
	dup, _ := filepath.Glob(filepath.Join(casesPath(t, "from-reports/lmeval-log-samples-dup"), "*.jsonl"))
	files = append(files, dup...)
	files = append(files, dataPath(t, "generations/math100-qwen25-math-instruct-maj8-example/math_cot_100.jsonl"),
		dataPath(t, "humaneval/samples-mistral-vs-zephyr/zephyr_samples.jsonl_results.jsonl"))
	clone := func(s Sample) Sample {
		s.ProblemKey, s.Completion, s.FinishReason = strings.Clone(s.ProblemKey), strings.Clone(s.Completion), strings.Clone(s.FinishReason)
		s.Extracted, s.Reason, s.Question = strings.Clone(s.Extracted), strings.Clone(s.Reason), strings.Clone(s.Question)
		s.Prompt, s.Reference, s.Record = strings.Clone(s.Prompt), strings.Clone(s.Reference), strings.Clone(s.Record)
		return s
	}
	for _, path := range files {
		head, _ := os.ReadFile(path)
		f, m, err := Sniff(head[:min(len(head), SniffBytes)], filepath.Base(path))
		if err != nil || strings.HasPrefix(filepath.Base(path), "dataset") {
			continue
		}
		var kept, copies []Sample
		var meta RunMeta
		err = Read(bytes.NewReader(head), filepath.Base(path), f, m, Options{OnSample: func(s Sample) error {
			kept, copies = append(kept, s), append(copies, clone(s))
			return nil
		}, OnMeta: func(x RunMeta) error { meta = x; return nil }})
		if err != nil && !strings.Contains(path, "dup") {
			t.Errorf("%s: %v", path, err)
		}
		sameSamples(t, kept, copies)
		if b, _ := json.Marshal(meta); bytes.ContainsRune(b, 0xfffd) {
			t.Errorf("%s: run metadata %s", path, b)
		}
	}
}

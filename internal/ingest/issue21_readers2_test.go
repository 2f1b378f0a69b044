package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Issue 21 item 5: OpenRLHF, simple-evals, LiveCodeBench and DeepSeek-Math files import with no
// mapping; testdata/tools/README.md names the writer code each fixture follows.

func TestReaders2Fixtures(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	math := readDatasetFile(t, filepath.Join(toolsDir, "dataset_math.jsonl"))
	lcb := readDatasetFile(t, filepath.Join(toolsDir, "dataset_lcb.jsonl"))
	t.Run("OpenRLHF generate_vllm, best_of_n 2", func(t *testing.T) {
		got, err := importFile(t, filepath.Join(toolsDir, "openrlhf_generate_vllm_output.jsonl"), words)
		if err != nil || got.format != FormatOpenRLHF || !slices.Equal(got.n, []int{2, 2, 2, 2}) || got.labels != 0 || got.how != "by statement" {
			t.Fatalf("%s n %v labels %d %s: %v", got.format, got.n, got.labels, got.how, err)
		}
		s := got.samples[4] // the second pass over the prompts
		if s.Completion != "She sells 14 + 9 = 22 loaves.<|im_end|>" || s.SampleIndex != 1 || !strings.Contains(s.Prompt, "<|im_start|>user\nA baker") || s.Line != 5 {
			t.Errorf("sample 4 %+v", s)
		}
	})
	t.Run("simple-evals MathEval, n_repeats 2", func(t *testing.T) {
		got, err := importFile(t, filepath.Join(toolsDir, "math_gpt-own-mini_20260102_030405_allresults.json"), math)
		if err != nil || got.format != FormatSimpleEvals || !slices.Equal(got.n, []int{2, 2, 2, 0, 0, 0, 0, 0}) ||
			!slices.Equal(got.c, []int{2, 1, 1, 0, 0, 0, 0, 0}) || got.labels != 6 || got.how != "by statement" {
			t.Fatalf("%s n %v c %v labels %d %s: %v", got.format, got.n, got.c, got.labels, got.how, err)
		}
		first, unsure := got.samples[0], got.samples[4]
		if first.Extracted != `\frac{1}{2}` || first.Reference != `\frac{1}{2}` || !strings.HasSuffix(first.Completion, `Answer: \frac{1}{2}`) || first.Record != "convos[0]" {
			t.Errorf("first %+v", first)
		}
		if unsure.Extracted != "" || unsure.Correct == nil || *unsure.Correct || unsure.Completion != "I am not sure." {
			t.Errorf("the sample without an answer %+v", unsure)
		}
		if got.meta.Tool != "simple-evals" || got.meta.Settings["score"] == "" {
			t.Errorf("meta %+v", got.meta)
		}
	})
	t.Run("LiveCodeBench eval_all, n 2", func(t *testing.T) {
		got, err := importFile(t, filepath.Join(toolsDir, "livecodebench_codegeneration_2_0.2_eval_all.json"), lcb)
		if err != nil || got.format != FormatLiveCodeBench || !slices.Equal(got.n, []int{2, 2, 2}) || !slices.Equal(got.c, []int{1, 2, 1}) ||
			got.labels != 6 || got.how != "by id" {
			t.Fatalf("%s n %v c %v labels %d %s: %v", got.format, got.n, got.c, got.labels, got.how, err)
		}
		s := got.samples[0] // 9001A, sorted first by LiveCodeBench
		if s.ProblemKey != "9001A" || s.Extracted != "while True: pass\n" || !strings.Contains(s.Completion, "```python\nwhile True") ||
			!strings.Contains(s.Reason, "Time Limit Exceeded") || *s.Correct || s.Record != "[0]" {
			t.Errorf("first %+v", s)
		}
		if got.meta.Tool != "LiveCodeBench" || got.meta.Settings["platform"] != "codeforces" {
			t.Errorf("meta %+v", got.meta)
		}
	})
	t.Run("DeepSeek-Math MATH, one folder per repeat", func(t *testing.T) {
		dir := filepath.Join(toolsDir, "deepseek_math", "math-test", "sample_logs", "cot", "samples")
		got, files, err := importPooled(t, filepath.Join(dir, "*", "predictions*.json"), math, nil)
		if err != nil || len(files) != 2 || !slices.Equal(got.n, []int{2, 2, 2, 0, 0, 0, 0, 0}) || !slices.Equal(got.c, []int{2, 1, 1, 0, 0, 0, 0, 0}) {
			t.Fatalf("files %v n %v c %v: %v", files, got.n, got.c, err)
		}
		if s := got.samples[3]; s.Extracted != "0.5" || s.SampleIndex != 1 || !strings.Contains(s.Reference, `\\frac{1}{2}`) || s.Completion != "The answer is \\boxed{0.5}." {
			t.Errorf("first sample of repeat 1 %+v", s)
		}
		one, err := importFile(t, filepath.Join(dir, "0", "predictions.json"), math)
		if err != nil || one.format != FormatDeepSeekMath || one.meta.Task != "math-test" {
			t.Fatalf("%s meta %+v: %v", one.format, one.meta, err)
		}
		// The folder itself holds each repeat's metrics.json too: refused, naming what to give.
		_, _, err = importPooled(t, dir, math, nil)
		var e *Error
		if !errors.As(err, &e) || e.File != "metrics.json" || !strings.Contains(e.Msg, "summary of numbers only") || !strings.Contains(e.Msg, "*/predictions*.json") {
			t.Fatalf("the folder with metrics.json: %v", err)
		}
	})
}

// mutateJSON rewrites a fixture through fn (the decoded document, or each line of JSONL).
func mutateJSON(t *testing.T, name string, fn func(v any)) []byte {
	t.Helper()
	data := toolFile(t, name)
	if strings.HasSuffix(name, ".jsonl") {
		var out bytes.Buffer
		for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var v any
			if err := json.Unmarshal(line, &v); err != nil {
				t.Fatal(err)
			}
			fn(v)
			b, _ := json.Marshal(v)
			out.Write(append(b, '\n'))
		}
		return out.Bytes()
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	fn(v)
	b, _ := json.MarshalIndent(v, "", "  ")
	return b
}

// eachRecord calls fn on each record of a JSON list, or on the record itself.
func eachRecord(v any, fn func(r map[string]any)) {
	if l, ok := v.([]any); ok {
		for _, r := range l {
			fn(r.(map[string]any))
		}
		return
	}
	fn(v.(map[string]any))
}

// The door: for each of these readers, a file whose completion field is empty, holds another
// field's text, or the prompt is refused, never read as plausible numbers.
func TestReaders2Door(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	math := readDatasetFile(t, filepath.Join(toolsDir, "dataset_math.jsonl"))
	lcb := readDatasetFile(t, filepath.Join(toolsDir, "dataset_lcb.jsonl"))
	type variant struct {
		what string
		to   func(r map[string]any) string // the completion's new text, from the record
	}
	empty := variant{"empty", func(map[string]any) string { return "" }}
	str := func(v any) string { s, _ := v.(string); return s }
	for _, tc := range []struct {
		file     string
		ds       []MatchProblem
		set      func(v any, to func(r map[string]any) string)
		variants []variant
	}{
		{"openrlhf_generate_vllm_output.jsonl", words, func(v any, to func(map[string]any) string) {
			r := v.(map[string]any)
			r["output"] = to(r)
		}, []variant{empty, {"the prompt", func(r map[string]any) string { return str(r["input"]) }}}},
		{"math_gpt-own-mini_20260102_030405_allresults.json", math, func(v any, to func(map[string]any) string) {
			for _, c := range v.(map[string]any)["convos"].([]any) {
				msgs := c.([]any)
				user := msgs[0].(map[string]any)
				for _, m := range msgs[1:] {
					m.(map[string]any)["content"] = to(user)
				}
			}
		}, []variant{empty, {"the prompt", func(user map[string]any) string { return str(user["content"]) }}}},
		{"livecodebench_codegeneration_2_0.2_eval_all.json", lcb, func(v any, to func(map[string]any) string) {
			eachRecord(v, func(r map[string]any) {
				for i := range r["output_list"].([]any) {
					r["output_list"].([]any)[i] = to(r)
				}
			})
		}, []variant{empty, {"the statement field", func(r map[string]any) string { return str(r["question_content"]) }}}},
		{"deepseek_math/math-test/sample_logs/cot/samples/0/predictions.json", math, func(v any, to func(map[string]any) string) {
			eachRecord(v, func(r map[string]any) { r["model_output"] = to(r) })
		}, []variant{empty, {"the prompt", func(r map[string]any) string { return str(r["prompt"]) }},
			{"the reference solution field", func(r map[string]any) string { return str(r["reference"].([]any)[0]) }}}},
	} {
		for _, vr := range tc.variants {
			t.Run(filepath.Base(tc.file)+" "+vr.what, func(t *testing.T) {
				data := mutateJSON(t, tc.file, func(v any) { tc.set(v, vr.to) })
				got, err := readBytes(t, filepath.Base(tc.file), data, tc.ds)
				var e *Error
				if !errors.As(err, &e) || !strings.Contains(e.Field, "completion") && !strings.Contains(e.Field, "output") && !strings.Contains(e.Field, "content") {
					t.Fatalf("read as %s n %v c %v: %v", got.format, got.n, got.c, err)
				}
			})
		}
	}
}

// Refusals name file, record and field, and the layout the file was read as.
func TestReaders2Refusals(t *testing.T) {
	math := readDatasetFile(t, filepath.Join(toolsDir, "dataset_math.jsonl"))
	// A convo with no sampled answer after the prompt.
	data := mutateJSON(t, "math_gpt-own-mini_20260102_030405_allresults.json", func(v any) {
		c := v.(map[string]any)["convos"].([]any)
		c[2] = c[2].([]any)[:1]
	})
	_, err := readBytes(t, "math_allresults.json", data, math)
	var e *Error
	if !errors.As(err, &e) || e.Record != "convos[2]" || e.Field != "[0]" || !strings.Contains(e.Msg, "no assistant message") || !strings.Contains(e.Msg, "simple-evals") {
		t.Fatalf("no answer: %v", err)
	}
	// OpenRLHF's iterative-DPO pairs are not samples.
	pair := []byte(`{"prompt": "User: Solve $x + 1 = 4$ for $x$.\nAssistant: ", "chosen": "3", "chosen_reward": 1.5, "rejected": "5", "rejected_reward": -1.0}` + "\n")
	_, _, err = Sniff(pair, "iter_dpo.jsonl")
	if err == nil || !strings.Contains(err.Error(), "preference pairs") || !strings.Contains(err.Error(), "--post_processor") {
		t.Fatalf("DPO pairs: %v", err)
	}
	// simple-evals' own summary beside the allresults file.
	_, _, err = Sniff([]byte("{\n  \"score\": 0.5,\n  \"score:std\": 0.5\n}"), "math_gpt_20260102_030405.json")
	if err == nil || !strings.Contains(err.Error(), "_allresults.json") {
		t.Fatalf("summary: %v", err)
	}
}

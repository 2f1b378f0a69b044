package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// Issue 21 item 5: NeMo-Skills, evalscope, SkyThought and MathArena files import with no mapping
// (testdata/tools/README.md names the writer code each fixture follows).
func TestToolReadersNoMapping(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	math := readDatasetFile(t, filepath.Join(toolsDir, "dataset_math.jsonl"))
	t.Run("NeMo-Skills output-rs*.jsonl", func(t *testing.T) {
		for _, arg := range []string{filepath.Join(toolsDir, "nemo_skills"), filepath.Join(toolsDir, "nemo_skills", "output-rs*.jsonl")} {
			got, files, err := importPooled(t, arg, words, nil)
			if err != nil || len(files) != 2 || !slices.Equal(got.n, []int{2, 2, 2, 2}) || !slices.Equal(got.c, []int{1, 1, 2, 1}) {
				t.Fatalf("%s: files %v n %v c %v: %v", arg, files, got.n, got.c, err)
			}
			s := got.samples[0]
			if s.Extracted != "23" || s.CompletionTokens != 20 || s.Completion != `Let me think. The answer is \boxed{23}.` || s.Reference != "23" || s.KeyKind != KeyNone {
				t.Errorf("first sample %+v", s)
			}
		}
		f, _, err := Sniff(toolFile(t, "nemo_skills/output-rs0.jsonl"), "output-rs0.jsonl")
		if err != nil || f != FormatNeMoSkills {
			t.Fatalf("Sniff = %s, %v", f, err)
		}
	})
	t.Run("evalscope reviews, one file per subset", func(t *testing.T) {
		got, files, err := importPooled(t, filepath.Join(toolsDir, "evalscope_reviews"), math, nil)
		if err != nil || len(files) != 2 || !slices.Equal(got.n, []int{2, 2, 2, 2, 2, 0, 0, 0}) || !slices.Equal(got.c, []int{2, 1, 1, 1, 1, 0, 0, 0}) {
			t.Fatalf("files %v n %v c %v: %v", files, got.n, got.c, err)
		}
		s := got.samples[1]
		if s.Extracted != "0.5" || s.Completion != `Simplifying, the answer is $\boxed{0.5}$.` || s.Reference != `\frac{1}{2}` || !strings.Contains(s.Prompt, "Write $\\frac{3}{6}$") {
			t.Errorf("second sample %+v", s)
		}
		// The first problem of the second subset is index 0 there: matched by its text.
		if s := got.samples[6]; s.Extracted != "(3,4)" || s.Line != 1 {
			t.Errorf("first sample of Level 2: %+v", s)
		}
	})
	t.Run("SkyThought results.json", func(t *testing.T) {
		got, err := importFile(t, filepath.Join(toolsDir, "skythought_results.json"), math)
		if err != nil || got.format != FormatSkyThought || !slices.Equal(got.n, []int{3, 3, 3, 3, 0, 0, 0, 0}) || !slices.Equal(got.c, []int{2, 1, 2, 1, 0, 0, 0, 0}) || got.labels != 12 {
			t.Fatalf("%s n %v c %v labels %d: %v", got.format, got.n, got.c, got.labels, err)
		}
		s := got.samples[5] // problem 1, third response
		if s.CompletionTokens != 112 || s.Reason != "Solution is incorrect." || !strings.Contains(s.Completion, `\boxed{7}`) || s.Record != `"1"` || s.ProblemKey != "1" {
			t.Errorf("sample %+v", s)
		}
	})
	t.Run("MathArena runs, one .json.zst per problem", func(t *testing.T) {
		dir := t.TempDir()
		for _, name := range []string{"1.json", "2.json", "3.json"} {
			var b bytes.Buffer
			zw, _ := zstd.NewWriter(&b)
			_, _ = zw.Write(toolFile(t, "matharena_runs/"+name))
			_ = zw.Close()
			if err := os.WriteFile(filepath.Join(dir, name+".zst"), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, arg := range []string{filepath.Join(toolsDir, "matharena_runs"), dir} {
			got, files, err := importPooled(t, arg, math, nil)
			if err != nil || len(files) != 3 || !slices.Equal(got.n, []int{4, 4, 4, 0, 0, 0, 0, 0}) || !slices.Equal(got.c, []int{2, 3, 4, 0, 0, 0, 0, 0}) {
				t.Fatalf("%s: files %v n %v c %v: %v", arg, files, got.n, got.c, err)
			}
			s := got.samples[1]
			if s.Completion != `The answer is $\boxed{1/3}$.` || s.Extracted != "1/3" || s.CompletionTokens != 151 || s.Reference != `\frac{1}{2}` || s.KeyKind != KeyNone {
				t.Errorf("%s: second run %+v", arg, s)
			}
		}
	})
}

// mutation rewrites a fixture's completions: to "" (empty), to the problem's statement (another
// field), to the prompt, or to the reference answer.
type mutation string

const (
	mutEmpty     mutation = "empty"
	mutStatement mutation = "statement"
	mutPrompt    mutation = "prompt"
	mutAnswer    mutation = "answer"
)

// doorCase is one reader's fixture and how to set its completions.
type doorCase struct {
	name  string
	files []string // fixture paths, one model
	ds    string
	// set rewrites one record (a line, a document) for m; lines says the file is JSONL.
	set   func(rec map[string]any, m mutation)
	lines bool
}

// The door: for every new reader, a file whose completion field is empty, holds another field's
// text, or the prompt is refused, or imported with a warning; never quietly read.
func TestToolReadersDoor(t *testing.T) {
	chatUser := func(msgs any) string {
		for _, m := range msgs.([]any) {
			if mm := m.(map[string]any); mm["role"] == "user" {
				return mm["content"].(string)
			}
		}
		return ""
	}
	cases := []doorCase{
		{"NeMo-Skills", []string{"nemo_skills/output-rs0.jsonl", "nemo_skills/output-rs1.jsonl"}, "dataset_words.jsonl", func(r map[string]any, m mutation) {
			r["generation"] = map[mutation]any{mutEmpty: "", mutStatement: r["problem"], mutPrompt: "<|user|>\n" + r["problem"].(string) + "\n<|assistant|>", mutAnswer: r["expected_answer"]}[m]
		}, true},
		{"evalscope", []string{"evalscope_reviews/math_500_Level 1.jsonl", "evalscope_reviews/math_500_Level 2.jsonl"}, "dataset_math.jsonl", func(r map[string]any, m mutation) {
			score := r["sample_score"].(map[string]any)["score"].(map[string]any)
			prompt := chatUser(r["messages"])
			score["prediction"] = map[mutation]any{mutEmpty: "", mutStatement: strings.TrimPrefix(strings.Split(prompt, "\n\n")[0], "Problem:\n"), mutPrompt: prompt, mutAnswer: r["target"]}[m]
		}, true},
		{"SkyThought", []string{"skythought_results.json"}, "dataset_math.jsonl", func(doc map[string]any, m mutation) {
			for _, v := range doc {
				r := v.(map[string]any)
				for _, e := range r["responses"].([]any) {
					e.(map[string]any)["content"] = map[mutation]any{mutEmpty: "", mutStatement: r["problem"], mutPrompt: r["prompt"], mutAnswer: r["answer"]}[m]
				}
			}
		}, false},
		{"MathArena", []string{"matharena_runs/1.json", "matharena_runs/2.json", "matharena_runs/3.json"}, "dataset_math.jsonl", func(r map[string]any, m mutation) {
			for _, conv := range r["messages"].([]any) {
				msgs := conv.([]any)
				last := msgs[len(msgs)-1].(map[string]any)
				last["content"] = map[mutation]any{mutEmpty: "", mutStatement: r["problem"], mutPrompt: chatUser(conv), mutAnswer: r["gold_answer"]}[m]
			}
		}, false},
	}
	for _, tc := range cases {
		ds := readDatasetFile(t, filepath.Join(toolsDir, tc.ds))
		for _, m := range []mutation{mutEmpty, mutStatement, mutPrompt, mutAnswer} {
			t.Run(tc.name+"/"+string(m), func(t *testing.T) {
				dir := t.TempDir()
				for _, f := range tc.files {
					data := mutate(t, toolFile(t, f), tc.lines, func(r map[string]any) { tc.set(r, m) })
					if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				warnings, err := importDoorDir(t, dir, ds)
				var e *Error
				switch {
				case err != nil && errors.As(err, &e) && e.File != "" && (e.Field != "" || e.Line > 0 || e.Record != ""):
					t.Logf("refused: %v", err)
				case err != nil:
					t.Fatalf("refused without naming where: %v", err)
				case len(warnings) > 0:
					t.Logf("warned: %s %v", warnings[0].Code, &warnings[0].Err)
				default:
					t.Fatalf("read with no refusal and no warning")
				}
			})
		}
	}
}

// mutate applies set to each record of a JSONL file (lines) or to a JSON document.
func mutate(t *testing.T, data []byte, lines bool, set func(map[string]any)) []byte {
	t.Helper()
	one := func(b []byte) []byte {
		var r map[string]any
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		set(r)
		marshal := json.Marshal
		if !lines { // the tools write documents indented
			marshal = func(v any) ([]byte, error) { return json.MarshalIndent(v, "", "    ") }
		}
		out, err := marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if !lines {
		return one(data)
	}
	var out [][]byte
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		out = append(out, one(l))
	}
	return append(bytes.Join(out, []byte("\n")), '\n')
}

// importDoorDir reads a folder as one model (sniffed, pooled, matched) and returns its warnings.
func importDoorDir(t *testing.T, dir string, ds []MatchProblem) ([]Warning, error) {
	t.Helper()
	files, err := ModelFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []Warning
	mt := NewMatcher("", ds, nil)
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		format, m, err := Sniff(data[:min(len(data), SniffBytes)], name)
		if err != nil {
			return warnings, err
		}
		mt.NextFile(name)
		err = Read(bytes.NewReader(data), name, format, m, Options{
			OnSample:  func(s Sample) error { _, err := mt.Resolve(&s); return err },
			OnWarning: func(w Warning) { warnings = append(warnings, w) },
		})
		if err != nil {
			return warnings, err
		}
	}
	return warnings, mt.Finish()
}

// Refusals of the new readers name file, line or record, field, and the layout read.
func TestToolReadersRefusals(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	line := `{"problem": "A ticket costs $7. How much do 6 tickets cost in dollars?", "generation": "42", "symbolic_correct": "maybe", "num_generated_tokens": 3}`
	_, err := readBytes(t, "output-rs0.jsonl", []byte(line+"\n"), words)
	wantError(t, err, 1, "symbolic_correct", "want a verdict")
	_, err = readBytes(t, "output-rs0.jsonl", []byte(strings.Replace(line, `"symbolic_correct": "maybe"`, `"predicted_answer": "42"`, 1)+"\n"+
		`{"problem": "x", "generation": ["a"], "predicted_answer": "42"}`+"\n"), words)
	wantError(t, err, 2, "generation", "read as NeMo-Skills")

	// SkyThought responses at two temperatures.
	two := `{"own/3": {"question": "A ticket costs $7. How much do 6 tickets cost in dollars?", "responses": {"0.0": {"content": "42", "correctness": true}, "0.7": {"content": "41", "correctness": false}}}}`
	_, err = readBytes(t, "results.json", []byte(two), words)
	var e *Error
	if !errors.As(err, &e) || e.Field != "responses" || e.Record != `"own/3"` || !strings.Contains(e.Msg, "2 temperatures (0.0, 0.7)") {
		t.Fatalf("two temperatures: %v", err)
	}
	// MathArena: grades and runs disagree.
	ma := `{"idx": 4, "problem": "A ticket costs $7. How much do 6 tickets cost in dollars?", "gold_answer": "42", "messages": [[{"role": "assistant", "content": "42"}]], "answers": ["42", "41"], "correct": [true, false]}`
	_, err = readBytes(t, "4.json", []byte(ma), words)
	if !errors.As(err, &e) || e.Field != "correct" || !strings.Contains(e.Msg, "2 grades for 1 runs") || !strings.Contains(e.Msg, "MathArena") {
		t.Fatalf("runs and grades: %v", err)
	}
	// evalscope: a score that is not a verdict.
	ev := `{"index": 0, "input": "A ticket costs $7. How much do 6 tickets cost in dollars?", "target": "42", "sample_score": {"score": {"value": {"acc": 0.5}, "prediction": "42", "main_score_name": "acc"}, "group_id": 0}}`
	_, err = readBytes(t, "gsm8k_main.jsonl", []byte(ev+"\n"), words)
	wantError(t, err, 1, "sample_score.score.value.acc", "give a threshold")
}

// evalscope before v1.0 wrote one line per problem, its samples in choices with their reviews
// (evalscope/evaluator/evaluator.py _get_review); NeMo-Skills' code evaluators write is_correct and
// is_correct-plus (EvalPlus's base and base + extra).
func TestToolReadersOtherVersions(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	var b strings.Builder
	for i, w := range []struct{ q, a string }{{"A ticket costs $7. How much do 6 tickets cost in dollars?", "42"}, {"A tank holds 120 litres and is one quarter full. How many litres must be added to fill it?", "90"}} {
		rec := map[string]any{"index": i, "answer_id": "answer-x", "raw_input": map[string]any{"question": w.q, "answer": w.a}, "origin_prompt": map[string]any{"data": []string{w.q}},
			"subset_name": "main", "choices": []any{
				map[string]any{"index": 0, "message": map[string]any{"content": "So #### " + w.a, "role": "assistant"}, "review": map[string]any{"gold": w.a, "pred": w.a, "result": true}},
				map[string]any{"index": 1, "message": map[string]any{"content": "So #### 5", "role": "assistant"}, "review": map[string]any{"gold": w.a, "pred": "5", "result": false}}},
			"reviewed": true, "review_id": "review-x", "reviewer_spec": map[string]any{"metric": []string{"AverageAccuracy"}}}
		line, _ := json.Marshal(rec)
		b.Write(line)
		b.WriteByte('\n')
	}
	got, err := readBytes(t, "gsm8k_main.jsonl", []byte(b.String()), words)
	if err != nil || got.format != FormatEvalscope || !slices.Equal(got.n, []int{0, 2, 0, 2}) || !slices.Equal(got.c, []int{0, 1, 0, 1}) ||
		got.samples[1].Extracted != "5" || got.meta.Task != "gsm8k_main" {
		t.Fatalf("%s n %v c %v meta %+v: %v", got.format, got.n, got.c, got.meta, err)
	}
	// The same problem on a second line of one file is refused.
	twice := b.String() + strings.SplitAfter(b.String(), "\n")[0]
	_, err = readBytes(t, "gsm8k_main.jsonl", []byte(twice), words)
	var e *Error
	if !errors.As(err, &e) || e.Line != 3 || !strings.Contains(e.Msg, "on two records of a per-problem file (line 1 and line 3)") {
		t.Fatalf("a repeated problem line: %v", err)
	}
	code := `{"task_id": "OwnEval/0", "question": "def add(a, b):\n", "generation": "    return a + b\n", "is_correct": true, "is_correct-plus": false, "num_generated_tokens": -1}` + "\n"
	var s []Sample
	err = Read(strings.NewReader(code), "output-rs0.jsonl", FormatNeMoSkills, nil, Options{OnSample: func(x Sample) error { s = append(s, x); return nil }})
	if err != nil || len(s) != 1 || *s[0].Correct || s[0].CompletionTokens != 0 || s[0].Question != "def add(a, b):\n" {
		t.Fatalf("code sample %+v: %v", s, err)
	}
}

// Look-alikes: a chat dataset row with gold_answer is not a MathArena run file, and a MathArena file
// cut inside its first conversation is still one.
func TestToolReadersSniff(t *testing.T) {
	if f, _, err := Sniff([]byte(`{"messages": [{"role": "user", "content": "1+1?"}], "gold_answer": "2"}`+"\n"), "chat.jsonl"); f == FormatMathArena {
		t.Errorf("chat dataset sniffed as %s (%v)", f, err)
	}
	head := `{"idx": 1, "problem": "1+1?", "gold_answer": "2", "messages": [[{"role": "user", "content": "1+1?"}, {"role": "assistant", "content": "` + strings.Repeat("x", 300<<10)
	if f, _, err := Sniff([]byte(head)[:SniffBytes], "1.json"); err != nil || f != FormatMathArena {
		t.Errorf("cut MathArena head: %s, %v", f, err)
	}
}

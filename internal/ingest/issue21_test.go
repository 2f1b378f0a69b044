package ingest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Issue 21: files other tools write are read right, or refused in words. Each fixture is in
// testdata/tools (README.md names the writer each follows).

// TRL logs prompts as plain strings (the chat template applied) and has no id column: the rows
// match the dataset by the statement inside the prompt, also when a mapping names no prompt field.
func TestTRLPlainPromptMatchedByText(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	path := filepath.Join(toolsDir, "trl_completions_00040.jsonl")
	got, err := importFile(t, path, words)
	if err != nil || got.format != FormatTRLCompletions || !slices.Equal(got.n, []int{2, 2, 2, 2}) || got.how != "by statement" {
		t.Fatalf("sniffed: %s n %v %s err %v", got.format, got.n, got.how, err)
	}
	// A mapping that names the completion and the verdict but not the prompt: the record's own
	// prompt field still names the problem (before, record 5 was read as dataset position 4).
	m := &Mapping{Completion: "completion", Correct: "accuracy_reward"}
	got, err = importMapped(t, path, words, m)
	if err != nil || !slices.Equal(got.n, []int{2, 2, 2, 2}) || !slices.Equal(got.c, []int{1, 1, 1, 1}) || got.how != "by statement" {
		t.Fatalf("mapped: n %v c %v %s err %v", got.n, got.c, got.how, err)
	}
}

// When text matching fails the refusal says what was tried; a record with neither id nor text
// says so, and what to map, instead of "problem 4 is not in the dataset".
func TestNoIDRefusalsSayWhatWasTried(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	code := readDatasetFile(t, filepath.Join(toolsDir, "dataset_code.jsonl"))
	path := filepath.Join(toolsDir, "trl_completions_00040.jsonl")
	_, err := importFile(t, path, code)
	var e *Error
	if !errors.As(err, &e) || e.Line != 1 || !strings.Contains(e.Msg, "none of the dataset's 2 problem statements is in the sample's question or prompt") {
		t.Fatalf("wrong dataset: %v", err)
	}
	var b bytes.Buffer
	for range 5 {
		b.WriteString(`{"step": 40, "completion": "The answer is 7.", "accuracy_reward": 0.0}` + "\n")
	}
	file := filepath.Join(t.TempDir(), "no_prompt.jsonl")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = importMapped(t, file, words, &Mapping{Completion: "completion", Correct: "accuracy_reward"})
	if !errors.As(err, &e) || e.Line != 5 || !strings.Contains(e.Msg, "no problem id and no question or prompt text") || !strings.Contains(e.Msg, "prompt=") {
		t.Fatalf("no text: %v", err)
	}
}

// OpenCompass's math_verify evaluator writes each gold as the text of a parsed list (a sympy form
// and the LaTeX), one per repeat: any form equal to the dataset's answer is the same reference.
func TestOpenCompassGoldForms(t *testing.T) {
	ds := readDatasetFile(t, filepath.Join(toolsDir, "dataset_math.jsonl"))
	got, err := importFile(t, filepath.Join(toolsDir, "opencompass_results_math_n2.json"), ds)
	if err != nil || got.format != FormatOpenCompass || !slices.Equal(got.n, []int{2, 2, 2, 2, 2, 2, 2, 2}) || !slices.Equal(got.c, []int{1, 2, 0, 2, 2, 1, 2, 1}) {
		t.Fatalf("%s n %v c %v err %v", got.format, got.n, got.c, err)
	}
	for _, tc := range []struct {
		ref, file string
		want      bool
	}{
		{`\frac{1}{2}`, `[1/2, '\\frac{1}{2}']`, true},
		{`\frac{1}{2}`, `["1/2", "\\frac{1}{2}"]`, true},
		{`\frac{1}{2}`, `0.5`, true},
		{`(3,4)`, `[(3, 4), '(3,4)']`, true},
		{`\frac{1}{2}`, `[1/3, '\\frac{1}{3}']`, false},
		{`3`, `[]`, false},
	} {
		m := NewMatcher("f", nil, nil)
		if got := m.sameReference(tc.ref, tc.file); got != tc.want {
			t.Errorf("sameReference(%q, %q) = %v", tc.ref, tc.file, got)
		}
	}
}

// BigCodeBench's eval_results.json has EvalPlus's top level (date, eval) but one status per sample.
func TestBigCodeBenchNotEvalPlus(t *testing.T) {
	code := readDatasetFile(t, filepath.Join(toolsDir, "dataset_code.jsonl"))
	path := filepath.Join(toolsDir, "bigcodebench_eval_results.json")
	got, err := importFile(t, path, code)
	if err != nil || got.format != FormatBigCodeBench || !slices.Equal(got.n, []int{3, 3}) || !slices.Equal(got.c, []int{1, 2}) || got.labels != 6 {
		t.Fatalf("%s n %v c %v labels %d err %v", got.format, got.n, got.c, got.labels, err)
	}
	if r := got.samples[1].Reason; !strings.HasPrefix(r, "status: fail; ") || !strings.Contains(r, "AssertionError") {
		t.Errorf("reason %q", r)
	}
	// Read as EvalPlus (a head that showed no entry): its first entry shows the other layout.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	err = Read(f, "eval_results.json", FormatEvalPlusResults, nil, Options{OnSample: func(s Sample) error { n++; return nil }})
	if err != nil || n != 6 {
		t.Fatalf("read as EvalPlus: %d samples, %v", n, err)
	}
	// An entry of neither layout is refused naming both.
	bad := []byte(`{"date": "2026-01-02 03:04", "eval": {"OwnEval/0": [{"task_id": "OwnEval/0", "solution": "x", "result": "ok"}]}}`)
	_, err = readBytes(t, "eval_results.json", bad, code)
	var e *Error
	if !errors.As(err, &e) || e.Field != "base_status" || !strings.Contains(e.Msg, "BigCodeBench") || !strings.Contains(e.Record, `eval["OwnEval/0"][0]`) {
		t.Fatalf("neither layout: %v", err)
	}
}

// importPooled reads several files of one model through one Matcher, as an import of a directory
// or a pattern does.
func importPooled(t *testing.T, arg string, ds []MatchProblem, m *Mapping) (matched, []string, error) {
	t.Helper()
	files, err := ModelFiles(arg)
	if err != nil {
		t.Fatal(err)
	}
	out := matched{n: make([]int, len(ds)), c: make([]int, len(ds))}
	mt := NewMatcher("", ds, nil)
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		format := FormatMapped
		if m == nil {
			head := make([]byte, SniffBytes)
			k, _ := f.Read(head)
			if format, _, err = Sniff(head[:k], name); err != nil {
				return out, files, err
			}
			_, _ = f.Seek(0, 0)
		}
		mt.NextFile(name)
		err = Read(f, name, format, m, Options{OnSample: func(s Sample) error {
			p, err := mt.Resolve(&s)
			if err != nil {
				return err
			}
			out.n[p]++
			if s.Correct != nil && *s.Correct {
				out.c[p]++
			}
			out.samples = append(out.samples, s)
			return nil
		}})
		f.Close()
		if err != nil {
			return out, files, err
		}
	}
	return out, files, mt.Finish()
}

// One model's samples in one file per seed (NeMo-Skills output-rs<seed>.jsonl) are pooled per
// problem, renumbered in the order read.
func TestModelFilesPooled(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	m := &Mapping{Question: "problem", Completion: "generation", Correct: "symbolic_correct", Extracted: "predicted_answer", Reference: "expected_answer"}
	for _, arg := range []string{filepath.Join(toolsDir, "nemo_skills"), filepath.Join(toolsDir, "nemo_skills", "output-rs*.jsonl")} {
		got, files, err := importPooled(t, arg, words, m)
		if err != nil || len(files) != 2 || filepath.Base(files[0]) != "output-rs0.jsonl" || !slices.Equal(got.n, []int{2, 2, 2, 2}) || !slices.Equal(got.c, []int{1, 1, 2, 1}) {
			t.Fatalf("%s: files %v n %v c %v err %v", arg, files, got.n, got.c, err)
		}
		if s := got.samples[4]; s.SampleIndex != 1 || s.Line != 1 {
			t.Errorf("first sample of the second file: %+v", s)
		}
	}
	// A sample index repeated within one file is still refused, naming that file.
	dir := t.TempDir()
	line := `{"problem_id": "own/0", "sample_index": 0, "completion": "23", "correct": true}` + "\n"
	_ = os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte(line), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte(line+line), 0o644)
	_, _, err := importPooled(t, dir, words, nil)
	var e *Error
	if !errors.As(err, &e) || e.File != "b.jsonl" || e.Line != 2 || !strings.Contains(e.Msg, "duplicate sample index 0") {
		t.Fatalf("duplicate within a file: %v", err)
	}
	// One line per problem: a problem in each of two files is pooled, on two lines of one refused.
	per := t.TempDir()
	rec := `{"problem_id": "own/1", "completions": ["90", "7"]}` + "\n"
	_ = os.WriteFile(filepath.Join(per, "p0.jsonl"), []byte(rec), 0o644)
	_ = os.WriteFile(filepath.Join(per, "p1.jsonl"), []byte(rec), 0o644)
	got, _, err := importPooled(t, per, words, nil)
	if err != nil || !slices.Equal(got.n, []int{0, 4, 0, 0}) || got.samples[3].SampleIndex != 3 {
		t.Fatalf("per-problem files: n %v, %v", got.n, err)
	}
	_ = os.WriteFile(filepath.Join(per, "p1.jsonl"), []byte(rec+rec), 0o644)
	_, _, err = importPooled(t, per, words, nil)
	if !errors.As(err, &e) || e.File != "p1.jsonl" || e.Line != 2 {
		t.Fatalf("a problem on two lines of one file: %v", err)
	}
	if _, err := ModelFiles(filepath.Join(dir, "*.csv")); err == nil || !strings.Contains(err.Error(), "matches no file") {
		t.Errorf("empty pattern: %v", err)
	}
}

// TRL's completions logged to wandb: the run's media/table/completions_<step>_<hash>.table.json,
// {"columns", "data"}, each row read as the TRL layout its columns show.
func TestWandbTableOfTRLCompletions(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	got, err := importFile(t, filepath.Join(toolsDir, "completions_40_0123abcd4567ef890123.table.json"), words)
	if err != nil || len(got.samples) == 0 {
		t.Fatalf("%s: %v", got.format, err)
	}
	if got.format != FormatWandbTable || !slices.Equal(got.n, []int{2, 2, 2, 2}) || got.how != "by statement" ||
		got.meta.Settings["step"] != "40" || got.samples[0].Record != "data[0]" {
		t.Fatalf("%s n %v %s meta %+v first %+v: %v", got.format, got.n, got.how, got.meta, got.samples[0], err)
	}
	bad := []byte(`{"columns": ["a", "b"], "data": [[1, 2]]}`)
	_, err = readBytes(t, "x.table.json", bad, words)
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Msg, "columns (a, b) match no layout") || e.Record != "data[0]" {
		t.Fatalf("unknown columns: %v", err)
	}
	short := []byte(`{"columns": ["step", "prompt", "completion"], "data": [["40", "A ticket costs $7. How much do 6 tickets cost in dollars?", "42"], ["40", "x"]]}`)
	_, err = readBytes(t, "y.table.json", short, words)
	if !errors.As(err, &e) || !strings.Contains(e.Msg, "a row of 2 values for 3 columns") || e.Record != "data[1]" {
		t.Fatalf("short row: %v", err)
	}
}

// A record that fits two known layouts goes to the second when the first's reader refuses its first
// record: here an OpenAI Batch line whose request failed, which also carries human-eval's fields.
func TestSniffTriesTheNextLayout(t *testing.T) {
	line := []byte(`{"custom_id": "r1", "response": null, "error": {"code": "x"}, "task_id": "OwnEval/0", "completion": "    return a + b\n", "passed": true}` + "\n")
	f, _, err := Sniff(line, "mixed.jsonl")
	if err != nil || f != FormatHumanEvalResults {
		t.Fatalf("Sniff = %s, %v; want %s", f, err, FormatHumanEvalResults)
	}
	// Alone, the failed batch line is a batch line (and refused as one at import).
	f, _, err = Sniff([]byte(`{"custom_id": "r1", "response": null, "error": {"code": "x"}}`+"\n"), "batch.jsonl")
	if err != nil || f != FormatOpenAIBatch {
		t.Fatalf("Sniff = %s, %v", f, err)
	}
	// Rows keyed by number (pandas' orient="index") or columns keyed by row are refused, not read
	// as one record.
	for _, doc := range []string{`{"0": {"prompt": "p", "completion": "c"}, "1": {"prompt": "p", "completion": "d"}}`,
		`{"prompt": {"0": "p", "1": "p"}, "completion": {"0": "c", "1": "d"}}`} {
		_, _, err := Sniff([]byte(doc), "df.json")
		if err == nil || !strings.Contains(err.Error(), "keyed by row number") || !strings.Contains(err.Error(), `orient=\"records\"`) && !strings.Contains(err.Error(), `orient="records"`) {
			t.Errorf("%s: %v", doc, err)
		}
	}
}

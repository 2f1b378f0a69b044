package ingest

import (
	"fmt"
	"strings"
	"testing"
)

// Issue 9, case 5: a mapping that names the wrong field as the completion
// (the dataset's statement or reference solution, the prompt, one constant
// text) is refused at the line where it becomes certain, naming the field;
// real completions, and a few echoes among them, pass.
func TestCompletionMustBeModelOutput(t *testing.T) {
	var ds []MatchProblem
	for i := range 60 {
		ds = append(ds, MatchProblem{Key: fmt.Sprintf("p%d", i), Statement: fmt.Sprintf("What is %d + %d? Give the sum.", i, i),
			Reference: fmt.Sprint(2 * i), Solution: fmt.Sprintf("Adding, %d + %d = \\boxed{%d}.", i, i, 2*i)})
	}
	run := func(completion func(p, j int) string, prompt func(p int) string) error {
		m := NewMatcher("mapped.jsonl", ds, nil)
		line := 0
		for p := range ds {
			for j := range 2 {
				line++
				s := Sample{Line: line, ProblemKey: ds[p].Key, KeyKind: KeyID, Completion: completion(p, j)}
				if prompt != nil {
					s.Prompt = prompt(p)
				}
				if _, err := m.Resolve(&s); err != nil {
					return err
				}
			}
		}
		return m.Finish()
	}
	cases := []struct {
		name       string
		completion func(p, j int) string
		prompt     func(p int) string
		line       int
		msg        string
	}{
		{"statement", func(p, _ int) string { return ds[p].Statement }, nil, 3, "the problem's statement"},
		{"reference solution", func(p, _ int) string { return ds[p].Solution }, nil, 3, "the dataset's reference solution"},
		{"prompt", func(p, _ int) string { return "<|im_start|>user\n" + ds[p].Statement + "<|im_end|>" },
			func(p int) string { return "<|im_start|>user\n" + ds[p].Statement + "<|im_end|>" }, 3, "the prompt"},
		{"constant", func(int, int) string { return "Please reason step by step." }, nil, 50, "a constant"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, run(tc.completion, tc.prompt), tc.line, "completion", tc.msg)
		})
	}
	// Model output, even where one sample repeats the statement, is read.
	if err := run(func(p, j int) string {
		if p == 0 && j == 0 {
			return ds[p].Statement
		}
		return fmt.Sprintf("%d plus %d is \\boxed{%d}", p, p, 2*p+j)
	}, nil); err != nil {
		t.Fatalf("real completions refused: %v", err)
	}
}

// A samples file given as the dataset is refused at its first line, saying
// what it looks like (a new user's samples file was read as problems and the
// error then blamed the other files); code datasets' own solutions are not
// taken for model output.
func TestDatasetIsNotASamplesFile(t *testing.T) {
	read := func(line string) error {
		return ReadDataset(strings.NewReader(line+"\n"), "given-as-dataset.jsonl", func(Problem) error { return nil })
	}
	for _, tc := range []struct{ line, field string }{
		{`{"problem_id": "a", "sample_index": 0, "completion": "\\boxed{2}", "correct": true}`, "completion"},
		{`{"doc_id": 0, "doc": {"problem": "1+1?", "answer": "2"}, "resps": [["2"]], "filtered_resps": ["2"]}`, "resps"},
	} {
		wantError(t, read(tc.line), 1, tc.field, "looks like a samples file")
	}
	for _, line := range []string{
		`{"task_id": 1, "text": "Write a function.", "code": "def f(): return 1", "test_list": ["assert f() == 1"]}`,
		`{"task_id": "HumanEval/0", "prompt": "def f():\n", "canonical_solution": "    return 1\n", "test": "def check(c): pass", "entry_point": "f"}`,
		`{"problem": "1+1?", "solution": "It is \\boxed{2}.", "answer": "2"}`,
	} {
		if err := read(line); err != nil {
			t.Errorf("dataset line refused: %v\n%s", err, line)
		}
	}
}

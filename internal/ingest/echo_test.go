package ingest

import (
	"fmt"
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

package code

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/verify"
	"github.com/reach-lab/reach/internal/verify/math"

	"github.com/reach-lab/reach/internal/testfiles"
)

// codeCase is one line of verifier-cases/code_cases.jsonl (carried in
// internal/testfiles).
type codeCase struct {
	ID           string `json:"id"`
	Prompt       string `json:"prompt"`
	Tests        string `json:"tests"`
	EntryPoint   string `json:"entry_point"`
	Solution     string `json:"solution"`
	ExpectedPass bool   `json:"expected_pass"`
	Kind         string `json:"kind"`
	Note         string `json:"note"`
}

// problemOf turns a case into what the verifiers see. The cases' solutions
// are whole programs (the function with its def line), so the HumanEval
// prompt is left out; tests without check() are plain asserts (MBPP style);
// a case without tests is a math answer.
func (c codeCase) problem() verify.Problem {
	switch {
	case strings.Contains(c.Tests, "def check"):
		return verify.Problem{Kind: "code", Fields: map[string]string{"prompt": "", "test": c.Tests, "entry_point": c.EntryPoint}}
	case strings.TrimSpace(c.Tests) != "":
		b, _ := json.Marshal([]string{c.Tests})
		return verify.Problem{Kind: "code", Fields: map[string]string{"test_list": string(b)}}
	}
	return verify.Problem{Kind: "math", Reference: c.Prompt}
}

func TestSharedCodeCases(t *testing.T) {
	f, err := os.Open(testfiles.Path(t, "verifier-cases/code_cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := verify.Dispatch{Math: math.New(), Code: New(testSandbox(t))}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var c codeCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		n++
		t.Run(c.ID, func(t *testing.T) {
			vd := d.Verify(context.Background(), c.problem(), c.Solution)
			t.Logf("%s: %s", vd.Status, vd.Reason)
			if vd.IsCorrect() != c.ExpectedPass {
				t.Errorf("%s (%s): got %s %q, want pass=%v (%s)", c.ID, c.Kind, vd.Status, vd.Reason, c.ExpectedPass, c.Note)
			}
			if vd.Status == verify.NotGraded {
				t.Errorf("not graded: %s", vd.Reason)
			}
			if c.Kind == "timeout" && !strings.HasPrefix(vd.Reason, "timeout") {
				t.Errorf("a timeout case failed for another reason: %q", vd.Reason)
			}
		})
	}
	if n < 15 {
		t.Errorf("read %d cases, want the file's 15", n)
	}
}

package code

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// The shipped Mistral/Zephyr files were graded by a human-eval fork that
// strips docstrings: under human-eval their completions (which repeat the
// prompt's docstring flush-left) are syntax errors, and re-verifying them
// without naming the harness gave 0 % against labels of 32 %. On a slice of
// each file (one completion of every seventh problem) the choice is
// strip-docstrings; on the canonical solutions, which every harness
// assembles alike, and on chat replies in a Markdown fence, which only
// human-eval takes out of the fence, it is human-eval.
func TestChooseHarness(t *testing.T) {
	v := New(testSandbox(t))
	ps := humanEvalProblems(t)
	byTask := map[string]heProblem{}
	for _, p := range ps {
		byTask[p.TaskID] = p
	}
	fields := func(p heProblem) map[string]string {
		return map[string]string{"prompt": p.Prompt, "test": p.Test, "entry_point": p.EntryPoint}
	}
	slice := func(file string) []Probe {
		var out []Probe
		seen := map[string]bool{}
		for _, s := range pairSamples(t) {
			if s.file != file || seen[s.task] {
				continue
			}
			seen[s.task] = true
			if len(seen)%7 != 1 || len(out) == ProbeSize {
				continue
			}
			label := s.passed
			out = append(out, Probe{Fields: fields(byTask[s.task]), Completion: s.comp, Label: &label})
		}
		return out
	}
	for _, file := range []string{"mistral-7b-instruct.jsonl", "zephyr-7b-alpha.jsonl"} {
		probes := slice(file)
		c, err := ChooseHarness(context.Background(), v, probes)
		if err != nil {
			t.Fatal(err)
		}
		// An empty completion is left out: it is no program under any harness.
		want := fmt.Sprintf("chosen automatically on %d of the file's completions (strip-docstrings: ", c.Probes)
		if c.Harness != HarnessStripDocstrings || c.Probes < len(probes)-2 || !strings.Contains(c.Why, want) {
			t.Errorf("%s: chose %q on %d probes: %s; want %s", file, c.Harness, c.Probes, c.Why, HarnessStripDocstrings)
		}
		t.Logf("%s: %s: %s", file, c.Harness, c.Why)
	}

	yes := true
	var canonical, fenced []Probe
	for i, p := range ps[:24] {
		if i%3 != 0 {
			continue
		}
		canonical = append(canonical, Probe{Fields: fields(p), Completion: p.Canonical, Label: &yes})
		// A chat reply: the whole function in a fence after a sentence.
		fenced = append(fenced, Probe{Fields: fields(p), Completion: "Here is the function:\n```python\n" + p.Prompt + p.Canonical + "```\n"})
	}
	for name, probes := range map[string][]Probe{"canonical": canonical, "fenced": fenced} {
		c, err := ChooseHarness(context.Background(), v, probes)
		if err != nil {
			t.Fatal(err)
		}
		if c.Harness != HarnessHumanEval {
			t.Errorf("%s: chose %q: %s; want %s", name, c.Harness, c.Why, HarnessHumanEval)
		}
		t.Logf("%s: %s: %s", name, c.Harness, c.Why)
	}
	// Problems of another layout (MBPP asserts): nothing to choose.
	c, err := ChooseHarness(context.Background(), v, []Probe{{Fields: map[string]string{"test_list": `["assert f() == 1"]`}, Completion: "def f():\n    return 1\n"}})
	if err != nil || c.Probes != 0 || c.Harness != "" {
		t.Errorf("asserts: %+v, %v", c, err)
	}
}

package jobs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// A math problem without a reference answer cannot be graded by Reach: an
// import that would have to grade its samples is refused naming the
// dataset's line and field (graded "unparseable", they once counted as the
// models' failures), while samples carrying the file's own verdicts import
// as before.
func TestProblemWithoutReferenceRefusedWhenReachGrades(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ds := write("ds.jsonl", `{"id":"a","problem":"1+1?","answer":"2"}`+"\n"+
		`{"id":"b","problem":"2+2?"}`+"\n"+`{"id":"c","problem":"3+3?","answer":" "}`+"\n")
	lines := func(verdict bool) string {
		var b strings.Builder
		for _, p := range []string{"a", "b", "c"} {
			for i := range 2 {
				v := ""
				if verdict {
					v = `,"correct":true`
				}
				b.WriteString(`{"problem_id":"` + p + `","sample_index":` + string(rune('0'+i)) + `,"completion":"The answer is \\boxed{4}."` + v + "}\n")
			}
		}
		return b.String()
	}
	graded := write("graded.jsonl", lines(false))
	labelled := write("labelled.jsonl", lines(true))

	spec := func(file string, reverify bool) intake.Spec {
		return intake.Spec{Name: "noref", Dataset: intake.LocalFile(ds), Reverify: reverify,
			Models: []intake.Model{{Name: "base", File: intake.LocalFile(labelled)}, {Name: "rl", File: intake.LocalFile(file)}}}
	}
	for name, tc := range map[string]struct {
		file     string
		reverify bool
	}{"no verdicts": {graded, false}, "file verdicts re-verified": {labelled, true}} {
		t.Run(name, func(t *testing.T) {
			id, _, err := intake.Create(ctx, e.st, e.client, spec(tc.file, tc.reverify))
			if err != nil {
				t.Fatal(err)
			}
			c := e.wait(t, id)
			want := `ds.jsonl:2: answer: problem "b" has no reference answer`
			if c.Status != store.StatusFailed || !strings.Contains(c.Error, want) {
				t.Fatalf("status %s, error %q; want failed naming %q", c.Status, c.Error, want)
			}
		})
	}
	t.Run("file verdicts", func(t *testing.T) {
		rep := e.importReady(t, spec(labelled, false))
		if got := rep.Pairs[0].Solved.Both; got != 3 {
			t.Fatalf("solved by both: %d, want 3 (the file's verdicts need no reference)", got)
		}
		// Re-verifying it would grade b's samples without a reference: the button is not offered.
		c, err := e.st.GetComparison(ctx, rep.ComparisonID)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := jobs.PlanReverify(ctx, e.st, vmath.New(), c)
		if err != nil {
			t.Fatal(err)
		}
		if want := `2 of the dataset's problems have no reference answer, so Reach cannot grade their samples (the first: "b", ds.jsonl line 2)`; plan.Why != want {
			t.Fatalf("re-verification: %q, want %q", plan.Why, want)
		}
	})
}

// Sampling grades every completion with Reach's verifier: a dataset with a
// math problem lacking its reference answer is refused when it is loaded,
// naming the problem and its line, before any request is sent.
func TestSamplingRefusesProblemWithoutReference(t *testing.T) {
	e, box := startSampling(t)
	ds := filepath.Join(t.TempDir(), "ds.jsonl")
	if err := os.WriteFile(ds, []byte(`{"id":"a","problem":"1+1?","answer":"2"}`+"\n"+`{"id":"b","problem":"2+2?"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := intake.SampleSpec{Name: "noref sampled", Dataset: intake.LocalFile(ds), AutoStart: true,
		Config: jobs.SamplingConfig{N: 2, Temperature: 1, TopP: 1, MaxTokens: 64, Template: "raw"},
		Models: []intake.EndpointModel{{Name: "base", BaseURL: "http://127.0.0.1:1/v1", Model: "m"}, {Name: "rl", BaseURL: "http://127.0.0.1:1/v1", Model: "m"}}}
	id, err := intake.CreateSampling(context.Background(), e.st, e.client, box, spec)
	if err != nil {
		t.Fatal(err)
	}
	c := e.wait(t, id)
	if c.Status != store.StatusFailed || !strings.Contains(c.Error, `"b" (line 2)`) || !strings.Contains(c.Error, "without a reference answer") {
		t.Fatalf("status %s, error %q; want failed naming problem b, line 2", c.Status, c.Error)
	}
}

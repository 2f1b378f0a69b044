package jobs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/store"
)

// TestFailedAdditionKeepsTheComparison: a model added to a ready comparison
// (a checkpoint a followed folder wrote) whose file fails in its import
// takes only itself away. The comparison failed and every model's samples
// were deleted before: a bad step file wiped a training run's comparison.
func TestFailedAdditionKeepsTheComparison(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ds := write("ds.jsonl", `{"id":"a","problem":"1+1?","answer":"2"}`+"\n"+`{"id":"b","problem":"2+2?","answer":"4"}`+"\n")
	line := func(pid string, i int, ok bool) string {
		c := map[bool]string{true: "true", false: "false"}[ok]
		return `{"problem_id":"` + pid + `","sample_index":` + string(rune('0'+i)) + `,"completion":"x","correct":` + c + "}\n"
	}
	base := write("base.jsonl", line("a", 0, true)+line("a", 1, false)+line("b", 0, false)+line("b", 1, false))
	rl := write("rl.jsonl", line("a", 0, true)+line("a", 1, true)+line("b", 0, true)+line("b", 1, false))
	id, _, err := intake.Create(ctx, e.st, e.client, intake.Spec{Name: "run", Dataset: intake.LocalFile(ds),
		Models: []intake.Model{{Name: "base", File: intake.LocalFile(base)}, {Name: "ppo step 100", File: intake.LocalFile(rl)}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := e.wait(t, id); c.Status != store.StatusReady {
		t.Fatalf("comparison %s: %s", c.Status, c.Error)
	}

	bad := write("step200.jsonl", line("a", 0, true)+line("zzz", 0, false))
	if _, err := intake.AddModels(ctx, e.st, e.client, id, []intake.Model{{Name: "ppo step 200", File: intake.LocalFile(bad)}}, false); err != nil {
		t.Fatalf("the bad file was refused before its import (the test needs it to fail in the import): %v", err)
	}
	c := e.wait(t, id)
	if c.Status != store.StatusReady || !strings.Contains(c.Error, "ppo step 200") || !strings.Contains(c.Error, "step200.jsonl:2") {
		t.Fatalf("after a failed addition: %s, note %q; want ready, naming the model and the line", c.Status, c.Error)
	}
	if len(c.Runs) != 2 {
		t.Errorf("%d models after the failed addition, want the 2 before it", len(c.Runs))
	}
	for _, r := range c.Runs {
		if n, _, err := e.st.CountSamples(ctx, r.ID); err != nil || n != 4 {
			t.Errorf("model %s keeps %d samples (err %v), want 4", r.ModelName, n, err)
		}
	}
	rep, err := analysis.Build(ctx, e.st, id)
	if err != nil {
		t.Fatalf("report after a failed addition: %v", err)
	}
	if rep.Models[1].Pass1 != 0.75 {
		t.Errorf("ppo step 100 pass@1 %v, want 0.75", rep.Models[1].Pass1)
	}

	// Two models added at once, one bad: both go (an addition is one import),
	// and the note stays the bad file's, whichever import ends first.
	fine := write("step250.jsonl", line("a", 0, true)+line("a", 1, true)+line("b", 0, true)+line("b", 1, false))
	if _, err := intake.AddModels(ctx, e.st, e.client, id, []intake.Model{{Name: "ppo step 250", File: intake.LocalFile(fine)},
		{Name: "ppo step 200", File: intake.LocalFile(bad)}}, false); err != nil {
		t.Fatal(err)
	}
	if c = e.wait(t, id); c.Status != store.StatusReady || len(c.Runs) != 2 || !strings.Contains(c.Error, "step200.jsonl:2") {
		t.Fatalf("after a failed addition of two models: %s with %d models, note %q", c.Status, len(c.Runs), c.Error)
	}

	// The next good step goes in, and the note goes.
	good := write("step300.jsonl", line("a", 0, true)+line("a", 1, true)+line("b", 0, true)+line("b", 1, true))
	if _, err := intake.AddModels(ctx, e.st, e.client, id, []intake.Model{{Name: "ppo step 300", File: intake.LocalFile(good)}}, false); err != nil {
		t.Fatal(err)
	}
	if c = e.wait(t, id); c.Status != store.StatusReady || len(c.Runs) != 3 || c.Error != "" {
		t.Fatalf("after a good addition: %s with %d models, note %q", c.Status, len(c.Runs), c.Error)
	}
}

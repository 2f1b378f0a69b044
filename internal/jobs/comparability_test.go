package jobs_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/intake"
)

// A pair of Inspect logs written with different temperatures and prompt templates imports with
// a settings-differ warning naming both, with each model's value (issue 25.1); the same logs
// with one setting alike report it among the same ones.
func TestSettingsDifferWarning(t *testing.T) {
	dir := toolFormats(t)
	base, rl := pairFiles(t, dir, "c_inspect_*.json")
	tmp := t.TempDir()
	edit := func(src, name string, temp float64, template string) string {
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		var log map[string]any
		if err := json.Unmarshal(raw, &log); err != nil {
			t.Fatal(err)
		}
		log["eval"].(map[string]any)["model_generate_config"] = map[string]any{"temperature": temp, "max_tokens": 4096}
		steps := log["plan"].(map[string]any)["steps"].([]any)
		steps[0].(map[string]any)["params"] = map[string]any{"template": template}
		out, _ := json.Marshal(log)
		p := filepath.Join(tmp, name+"_"+filepath.Base(src))
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b := edit(base, "b", 0.6, "Solve step by step: {prompt}")
	r := edit(rl, "r", 1.0, "{prompt}\nPut the final answer after ANSWER:")
	e := start(t)
	rep := e.importReady(t, intake.Spec{Name: "settings", Dataset: intake.LocalFile(filepath.Join(dir, "ds_gsm8k_3.jsonl")),
		Models: []intake.Model{{Name: "base", File: intake.LocalFile(b)}, {Name: "rl", File: intake.LocalFile(r)}}})
	cp := rep.Comparability
	if cp == nil || cp.Alike || len(cp.Differences) != 2 {
		t.Fatalf("comparability %+v; want temperature and template differing", cp)
	}
	var text string
	for _, w := range rep.Warnings {
		if w.Code == "settings-differ" {
			text = w.Text
		}
	}
	for _, want := range []string{"temperature: base 0.6, rl 1", "prompt template: base Solve step by step: {prompt}, rl {prompt}"} {
		if !strings.Contains(text, want) {
			t.Errorf("warning %q does not name %q", text, want)
		}
	}
	same := strings.Join(cp.Same, ", ")
	if !strings.Contains(same, "token budget") || !strings.Contains(same, "grader") {
		t.Errorf("same settings %q; want the token budget and the grader", same)
	}
}

package views

import (
	"context"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// The comparison page says which code harness graded each model and, when
// Reach chose it, why (escaped as text); a named harness has no reason.
func TestCodeGradingNoteSaysWhyTheHarness(t *testing.T) {
	v := ReportView{Code: CodeInfo{Problems: 164}, C: store.Comparison{Runs: []store.Run{
		{ModelName: "mistral", CodeHarness: "strip-docstrings", CodeHarnessWhy: "chosen automatically on 23 of the file's completions (strip-docstrings: 22 valid <b>)"},
		{ModelName: "zephyr", CodeHarness: "human-eval"},
	}}}
	var b strings.Builder
	if err := codeGradingNote(v).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`id="code-harness-why"`, "<bdi>mistral</bdi>: <code>strip-docstrings</code> chosen automatically on 23 of the file&#39;s completions (strip-docstrings: 22 valid &lt;b&gt;)",
		"--code-harness"} {
		if !strings.Contains(page, want) {
			t.Errorf("note lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "zephyr: <code>") {
		t.Errorf("a named harness given a reason:\n%s", page)
	}
	v.C.Runs[0].CodeHarnessWhy = ""
	b.Reset()
	_ = codeGradingNote(v).Render(context.Background(), &b)
	if strings.Contains(b.String(), "code-harness-why") {
		t.Errorf("reasons listed without any:\n%s", b.String())
	}
}

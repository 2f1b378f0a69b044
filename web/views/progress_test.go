package views

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// A failed import's page says it failed, not that it is importing and
// updates by itself, and a failed stage shows no percentage (a file read to
// its end and then refused read "failed · 100 %").
func TestProgressPageOfAFailedImport(t *testing.T) {
	c := store.Comparison{ID: 7, Name: "bad pair", Status: store.StatusFailed, Error: "rl.jsonl:31: unknown problem",
		Runs: []store.Run{{ID: 1, ModelName: "base", Role: "base"}, {ID: 2, ModelName: "rl", Role: "rl"}}}
	v := ProgressView{C: c, Stages: map[int64][]store.Progress{
		2: {{RunID: 2, Stage: "import", Status: "failed", Done: 40, Total: 40, Error: "rl.jsonl:31: unknown problem"}},
	}}
	var b bytes.Buffer
	if err := ProgressPage(v).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"Importing and verifying", "updates by itself", "failed · 100%"} {
		if strings.Contains(page, bad) {
			t.Errorf("failed comparison's page says %q", bad)
		}
	}
	if !strings.Contains(page, "This comparison failed") || !strings.Contains(page, "rl.jsonl:31: unknown problem") {
		t.Errorf("page does not say it failed and why:\n%s", page)
	}
}

package web_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
)

// One uploaded file whose records carry the training step (verl's dump of
// steps 100, 200 and 300) becomes one checkpoint per step in the form, as
// from the command line; the base model's such file is refused in words.
func TestUploadOneFileOfSteps(t *testing.T) {
	tools := filepath.Join("..", "internal", "ingest", "testdata", "tools")
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "steps@lab.org", false, "editor")
	id := upload(t, a, acct, "one file", filepath.Join(tools, "dataset_words.jsonl"), [][3]string{
		{"base", "base", filepath.Join(tools, "vllm_outputs.jsonl")}, {"rl", "ppo", filepath.Join(tools, "verl_val_steps.jsonl")}})
	a.waitReady(t, id, time.Minute)
	rep, err := analysis.Build(context.Background(), a.st, id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tp := range rep.Trajectory {
		got = append(got, fmt.Sprintf("%s@%d %.2f", tp.Model, tp.Step, 100*tp.Pass1))
	}
	// verl_val_steps.jsonl: 4 problems, 2 samples each; correct per problem 1,0,2,0 / 2,1,1,0 / 2,2,0,1.
	if want := "base@0 50.00 ppo step 100@100 37.50 ppo step 200@200 50.00 ppo step 300@300 62.50"; strings.Join(got, " ") != want {
		t.Errorf("trajectory %q; want %q", strings.Join(got, " "), want)
	}
	page := getPage(t, a, acct, fmt.Sprintf("/comparisons/%d", id))
	if !strings.Contains(page, "ppo step 300") {
		t.Errorf("the page names no checkpoint ppo step 300")
	}
}

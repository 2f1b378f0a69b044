package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/testdb"
)

// reach bundle ID -o DIR writes the folder and says its size; a folder
// already holding files is refused.
func TestBundleCommand(t *testing.T) {
	tools := filepath.Join("..", "..", "internal", "ingest", "testdata", "tools")
	_, url := testdb.New(t)
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "bundle")
	var buf bytes.Buffer
	vllm := filepath.Join(tools, "vllm_outputs.jsonl")
	if err := runImport(ctx, []string{"--dataset", filepath.Join(tools, "dataset_words.jsonl"), "--base", "base=" + vllm, "--model", "rl=" + vllm,
		"--name", "to bundle", "--wait", "--database-url", url}, &buf); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := runBundle(ctx, []string{"1", "-o", out, "--max-samples-per-problem", "2", "--database-url", url}, &buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "comparison 1 bundled in "+out) || !strings.Contains(buf.String(), "index.html") {
		t.Errorf("the command said %q", buf.String())
	}
	for _, f := range []string{"index.html", "static/echarts.min.js", "data/crossover.csv", "data/samples.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the bundle has no %s: %v", f, err)
		}
	}
	problems, _ := filepath.Glob(filepath.Join(out, "problems", "*.html"))
	if len(problems) == 0 {
		t.Error("the bundle has no problem pages")
	}
	if err := runBundle(ctx, []string{"1", "-o", out, "--database-url", url}, &buf); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("bundling into a full folder: %v, want refused", err)
	}
	if err := runBundle(ctx, []string{"1", "--database-url", url}, &buf); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("no -o: %v, want the usage", err)
	}
}

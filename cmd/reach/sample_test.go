package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reach sample --adaptive needs --budget, --budget needs --adaptive, and a
// budget that does not fit the dataset (10 problems, 2 models, n = 8: from
// 40 to 160 samples) is refused in words, all before the database is opened.
func TestRunSampleAdaptiveFlags(t *testing.T) {
	dataset := filepath.Join(t.TempDir(), "ten.jsonl")
	var lines []string
	for i := range 10 {
		lines = append(lines, fmt.Sprintf(`{"id": "p%d", "problem": "What is %d+0?", "answer": "%d"}`, i, i, i))
	}
	if err := os.WriteFile(dataset, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--dataset", dataset, "--name", "x", "--n", "8", "--base", "b=http://127.0.0.1:9/v1#b", "--model", "r=http://127.0.0.1:9/v1#r",
		"--database-url", "postgres://127.0.0.1:1/none"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--budget", "100"}, "--budget applies only to adaptive sampling: add --adaptive, or leave --budget out"},
		{[]string{"--adaptive"}, "--adaptive needs --budget"},
		{[]string{"--budget", "0"}, "--budget applies only to adaptive sampling"},
		{[]string{"--adaptive", "--budget", "-5"}, "--budget -5 is negative"},
		{[]string{"--adaptive", "--budget", "161"}, "a budget of 161 samples is more than the uniform design draws (n = 8 × 2 models × 10 problems = 160): lower the budget or raise n"},
		{[]string{"--adaptive", "--budget", "39"}, "a budget of 39 samples is too small: adaptive sampling draws at least 2 samples per model and problem, 40 for 2 models × 10 problems"},
		{[]string{"--adaptive", "--budget", "100", "--limit", "4"}, "more than the uniform design draws (n = 8 × 2 models × 4 problems = 64)"},
		{[]string{"--adaptive", "--budget", "100", "--n", "1"}, "the target n must be at least 2"},
	} {
		var out bytes.Buffer
		err := runSample(context.Background(), append(append([]string{}, common...), tc.args...), &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("reach sample %q: %v; want an error containing %q", tc.args, err, tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("reach sample %q printed %q", tc.args, out.String())
		}
	}
}

// Package examples ships two real comparisons that `reach serve` loads into
// an empty database, so a new user's first page is a real result: the
// MATH500 counts pair of Yue et al.'s audited reproduction (Qwen2.5-7B vs
// SimpleRL-Zoo, n = 128) and a HumanEval pair with completion texts.
package examples

import (
	"context"
	"embed"
	"fmt"
	"io"
	"path"

	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify/code"
)

//go:embed data/*.jsonl data/*.csv
var files embed.FS

func file(name string) intake.File {
	return intake.File{Name: name, Open: func() (io.ReadCloser, error) { return files.Open(path.Join("data", name)) }}
}

// Specs are the shipped example comparisons.
func Specs() []intake.Spec {
	return []intake.Spec{
		{
			Name: "HumanEval: Mistral-7B-Instruct vs Zephyr-7B-alpha",
			SourceNote: "10 completions per task at T = 0.2 with human-eval pass/fail, from bdytx5/humanEval_mistral_vs_zephyr " +
				"(MIT). Two fine-tunes of Mistral-7B (Zephyr = SFT + DPO), not a base-vs-RLVR pair. The fork's harness strips " +
				"docstrings from each completion before running it; Re-verify runs them the same way (harness strip-docstrings) in Reach's sandbox.",
			Dataset: file("humaneval.jsonl"),
			Models: []intake.Model{
				{Name: "Mistral-7B-Instruct-v0.1", Role: "base", File: file("mistral-7b-instruct.jsonl"), CodeHarness: code.HarnessStripDocstrings},
				{Name: "zephyr-7b-alpha", Role: "rl", File: file("zephyr-7b-alpha.jsonl"), CodeHarness: code.HarnessStripDocstrings},
			},
		},
		{
			Name: "MATH500: Qwen2.5-7B base vs SimpleRL-Zoo (n = 128)",
			SourceNote: "Per-problem correct counts from the audited public reproduction of Yue et al. 2025 (arXiv 2504.13837), " +
				"cc1107yss/limit-of-rlvr-qwen7b-math500-reproduction @ 85ce075: Qwen/Qwen2.5-7B vs hkust-nlp/Qwen-2.5-7B-SimpleRL-Zoo, " +
				"zero-shot qwen-boxed prompt, T = 0.6, top-p 0.95, 128 samples per problem. Only counts were published, so problem pages show no completions.",
			Dataset: file("math500.jsonl"),
			Models: []intake.Model{
				{Name: "Qwen2.5-7B", Role: "base", File: file("qwen2.5-7b-base.csv")},
				{Name: "Qwen2.5-7B-SimpleRL-Zoo", Role: "rl", File: file("qwen2.5-7b-simplerl-zoo.csv")},
			},
		},
	}
}

// SeedIfEmpty enqueues the example comparisons when the database has no
// comparison at all, and returns their ids.
func SeedIfEmpty(ctx context.Context, st *store.Store, client *jobs.Client) ([]int64, error) {
	n, err := st.CountComparisons(ctx)
	if err != nil || n > 0 {
		return nil, err
	}
	var ids []int64
	for _, spec := range Specs() {
		id, _, err := intake.Create(ctx, st, client, spec)
		if err != nil {
			return ids, fmt.Errorf("load example %q: %w", spec.Name, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Open opens one of the shipped data files (e.g. "math500.jsonl",
// "qwen2.5-7b-base.csv"); the benchmark generator builds on them.
func Open(name string) (io.ReadCloser, error) { return files.Open(path.Join("data", name)) }

package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testfiles"
)

// toolFormats is the carried cases/tool-formats: pairs of files in the layouts
// other tools write, all with one known answer (its README).
func toolFormats(t *testing.T) string {
	t.Helper()
	return testfiles.Path(t, "cases/tool-formats")
}

// ToolPairs are the tool-formats pairs: a glob matching a base and an RL
// file, and the dataset they pair with.
var ToolPairs = []struct{ Tool, Glob, Dataset string }{
	{"lm-eval", "a_lmeval_*_samples_math_500_*.jsonl", "ds_math500_3.jsonl"},
	{"lm-eval filters", "a_lmeval_*_samples_gsm8k_*.jsonl", "ds_gsm8k_3.jsonl"},
	{"lighteval parquet", "b_lighteval_*_details_lighteval_*.parquet", "ds_math500_3.jsonl"},
	{"lighteval old", "b_lighteval_old_*.jsonl", "ds_math500_3.jsonl"},
	{"inspect eval", "c_inspect_*.eval", "ds_gsm8k_3.jsonl"},
	{"inspect json", "c_inspect_*.json", "ds_gsm8k_3.jsonl"},
	{"verl validation", "f_verl_*_validation_200.jsonl", "ds_math500_3.jsonl"},
	{"verl main_generation", "f_verl_main_generation_*.jsonl", "ds_math500_3.jsonl"},
	{"openai batch", "g_openai_batch_*_output.jsonl", "ds_math500_3.jsonl"},
	{"vllm", "g_vllm_requestoutput_*.jsonl", "ds_math500_3.jsonl"},
}

// PairFiles returns a pair's base and RL files.
func pairFiles(t *testing.T, dir, glob string) (base, rl string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, glob))
	for _, f := range files {
		switch {
		case strings.Contains(filepath.Base(f), "_base"):
			base = f
		case strings.Contains(filepath.Base(f), "_rl"):
			rl = f
		}
	}
	if base == "" || rl == "" {
		t.Fatalf("%s: no base and RL file in %v", glob, files)
	}
	return base, rl
}

// checkToolAnswer asserts the tool-formats README's answer: base pass@1 50 %,
// pass@4 100 %; RL pass@1 66.67 %, pass@4 66.67 %; both 2, base-only 1.
func checkToolAnswer(t *testing.T, rep *analysis.Report) {
	t.Helper()
	if len(rep.Models) != 2 || rep.Problems != 3 || rep.KMax != 4 {
		t.Fatalf("%d models, %d problems, k max %d; want 2, 3, 4", len(rep.Models), rep.Problems, rep.KMax)
	}
	b, r := rep.Models[0], rep.Models[1]
	got := []float64{pct(b.Pass1), pct(b.PassAtK[3].Value), pct(r.Pass1), pct(r.PassAtK[3].Value)}
	want := []float64{50, 100, 66.67, 66.67}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("base pass@1, pass@4, RL pass@1, pass@4 = %v; want %v", got, want)
			break
		}
	}
	if s := rep.Pairs[0].Solved; s != (analysis.Solved{Both: 2, BaseOnly: 1}) {
		t.Errorf("solved sets %+v; want both 2, base-only 1", s)
	}
}

// Every tool-formats pair imports as `reach import` does it, without a
// mapping, and gives the one known answer (per-sample verdicts from the file
// where the tool writes them, else from Reach's verifier).
func TestToolFormatsImport(t *testing.T) {
	dir := toolFormats(t)
	e := start(t)
	for _, tc := range ToolPairs {
		t.Run(tc.Tool, func(t *testing.T) {
			base, rl := pairFiles(t, dir, tc.Glob)
			id, mapped, err := intake.Create(context.Background(), e.st, e.client, intake.Spec{Name: tc.Tool,
				Dataset: intake.LocalFile(filepath.Join(dir, tc.Dataset)),
				Models:  []intake.Model{{Name: "base", File: intake.LocalFile(base)}, {Name: "rl", File: intake.LocalFile(rl)}}})
			if err != nil {
				t.Fatal(err)
			}
			if len(mapped) != 0 {
				t.Errorf("read through a guessed mapping: %v", mapped)
			}
			c := e.wait(t, id)
			if c.Status != store.StatusReady {
				t.Fatalf("comparison %s: %s", c.Status, c.Error)
			}
			rep, err := analysis.Build(context.Background(), e.st, id)
			if err != nil {
				t.Fatal(err)
			}
			checkToolAnswer(t, rep)
			if src := rep.Models[0].Source; src == nil || src.Layout == "" || src.File != filepath.Base(base) {
				t.Errorf("source of the base model: %+v", src)
			}
		})
	}
}

// reach import never reads a file in an unrecognised layout on a guess: it
// refuses with the guessed mapping (for --map), keeping nothing; with
// AcceptGuess (--accept-guess) the guess is used.
func TestImportRefusesAGuess(t *testing.T) { testImportRefusesAGuess(t) }

// TestImportRefusesAGuessUnlicensed is TestImportRefusesAGuess on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestImportRefusesAGuess runs on the stand-in.
func TestImportRefusesAGuessUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testImportRefusesAGuess(t)
}

func testImportRefusesAGuess(t *testing.T) {
	e := start(t)
	spec := gsm8kSpec(t, false)
	spec.AcceptGuess = false
	_, _, err := intake.Create(context.Background(), e.st, e.client, spec)
	var ge *intake.GuessError
	if !errors.As(err, &ge) || ge.Model != "SFT" || !strings.Contains(err.Error(), "--map") ||
		!strings.Contains(err.Error(), "problem_id=qid,list=rollouts,completion=text,correct=correct") {
		t.Fatalf("err = %v", err)
	}
	var uploads int
	if err := e.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM uploads`).Scan(&uploads); err != nil || uploads != 0 {
		t.Errorf("%d uploads kept (%v)", uploads, err)
	}
	// The printed mapping, passed back with --map, imports.
	m, err := intake.ParseMapping(intake.FormatMapping(ge.Guess))
	if err != nil {
		t.Fatal(err)
	}
	spec.Models[0].Mapping, spec.Models[1].Mapping = m, m
	rep := e.importReady(t, spec)
	if s, want := rep.Pairs[0].Solved, gsm8kSolved(testfiles.Facts(t)); s != want {
		t.Errorf("solved %+v, want %+v", s, want)
	}
}

type trlParquetRow struct {
	Step           int64   `parquet:"step"`
	Prompt         string  `parquet:"prompt"`
	Completion     string  `parquet:"completion"`
	AccuracyReward float64 `parquet:"accuracy_reward"`
	Advantage      float64 `parquet:"advantage"`
}

// The tools without a pair in tool-formats import through reach import from
// fixtures in their layouts (internal/ingest/testdata/tools): EvalPlus
// results, OpenCompass predictions, released generations, TRL completions
// (parquet). Each fixture solves every problem once in two samples.
func TestToolFixturesImport(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "ingest", "testdata", "tools")
	words, code := filepath.Join(dir, "dataset_words.jsonl"), filepath.Join(dir, "dataset_code.jsonl")
	var tr []trlParquetRow
	for _, p := range []struct{ q, a string }{{"A baker sells 14 loaves in the morning and 9 in the afternoon. How many loaves does she sell in the day?", "23"},
		{"A tank holds 120 litres and is one quarter full. How many litres must be added to fill it?", "90"},
		{"Tom reads 12 pages a day for 5 days and then 20 pages on the sixth day. How many pages does he read?", "80"},
		{"A ticket costs $7. How much do 6 tickets cost in dollars?", "42"}} {
		tr = append(tr, trlParquetRow{Step: 40, Prompt: "<|user|>" + p.q + "<|assistant|>", Completion: "The answer is \\boxed{" + p.a + "}.", AccuracyReward: 1},
			trlParquetRow{Step: 40, Prompt: "<|user|>" + p.q + "<|assistant|>", Completion: "I am not sure.", Advantage: -1})
	}
	trlPath := filepath.Join(t.TempDir(), "completions_00040.parquet")
	f, err := os.Create(trlPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := parquet.Write(f, tr); err != nil {
		t.Fatal(err)
	}
	f.Close()
	e := start(t)
	for _, tc := range []struct {
		tool, file, dataset string
		problems            int
		source              string
	}{
		{"evalplus", filepath.Join(dir, "evalplus_eval_results.json"), code, 2, "file"},
		{"opencompass", filepath.Join(dir, "opencompass_predictions_own_words.json"), words, 4, "verifier"},
		{"hf generations", filepath.Join(dir, "hf_generations_openr1.jsonl"), words, 4, "file"},
		{"trl", trlPath, words, 4, "verifier"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			rep := e.importReady(t, intake.Spec{Name: tc.tool, Dataset: intake.LocalFile(tc.dataset),
				Models: []intake.Model{{Name: "base", File: intake.LocalFile(tc.file)}, {Name: "rl", File: intake.LocalFile(tc.file)}}})
			m := rep.Models[0]
			if rep.Problems != tc.problems || rep.KMax != 2 || pct(m.Pass1) != 50 || m.Solved != tc.problems ||
				!strings.HasPrefix(m.VerdictSource, tc.source) && !(tc.source == "verifier" && strings.Contains(m.VerdictSource, "verifier")) {
				t.Errorf("problems %d, k max %d, pass@1 %v, solved %d, verdicts by %q; want %d, 2, 50, all, %s",
					rep.Problems, rep.KMax, pct(m.Pass1), m.Solved, m.VerdictSource, tc.problems, tc.source)
			}
		})
	}
}

// A harness whose prompt asks for "ANSWER: $X$" (lighteval, Inspect): the
// vLLM pair rewritten to that marker gives the known answer, as its boxed
// original does. Rewritten to a marker the verifier does not know, every
// sample falls to a fallback rule the strict policy does not count, and the
// report says so at its top instead of showing 0 % in silence.
func TestMarkerFormsThroughImport(t *testing.T) {
	dir := toolFormats(t)
	base, rl := pairFiles(t, dir, "g_vllm_requestoutput_*.jsonl")
	boxed := regexp.MustCompile(`Therefore, the final answer is \$\\\\boxed\{(.*?)\}\$\.`)
	rewrite := func(src, marker string) string {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		out := boxed.ReplaceAll(b, []byte(marker+` $$${1}$$`))
		if bytes.Equal(out, b) {
			t.Fatalf("%s: no boxed answer rewritten", src)
		}
		p := filepath.Join(t.TempDir(), filepath.Base(src))
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	e := start(t)
	for _, tc := range []struct {
		marker string
		warned bool
	}{{`\nANSWER:`, false}, {`\n**Final Answer:**`, false}, {`\nRESULT =>`, true}} {
		t.Run(tc.marker, func(t *testing.T) {
			rep := e.importReady(t, intake.Spec{Name: tc.marker, Dataset: intake.LocalFile(filepath.Join(dir, "ds_math500_3.jsonl")),
				Models: []intake.Model{{Name: "base", File: intake.LocalFile(rewrite(base, tc.marker))}, {Name: "rl", File: intake.LocalFile(rewrite(rl, tc.marker))}}})
			var warned []analysis.Warning
			for _, w := range rep.Warnings {
				if w.Code == "answers-not-graded" {
					warned = append(warned, w)
				}
			}
			if !tc.warned {
				checkToolAnswer(t, rep)
				if len(warned) != 0 {
					t.Errorf("warned: %+v", warned)
				}
				return
			}
			if len(warned) != 2 || rep.Warnings[0].Code != "answers-not-graded" || warned[0].Severity != analysis.SeverityCritical {
				t.Fatalf("warnings %+v; want answers-not-graded first, for both models", rep.Warnings)
			}
			if !strings.Contains(warned[0].Text, "base: 12 of 12 samples (100.0 %)") || !strings.Contains(warned[0].Text, `RESULT =>`) ||
				rep.Models[0].UngradedExample == nil || rep.Models[0].UngradedExample.Rule != "last-math" {
				t.Errorf("warning %q, example %+v", warned[0].Text, rep.Models[0].UngradedExample)
			}
		})
	}
}

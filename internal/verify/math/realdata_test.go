package math

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/verify"
	"github.com/reach-lab/reach/internal/verify/cases"

	"github.com/reach-lab/reach/internal/testfiles"
)

// realFiles are the labelled generation files the repository carries
// (internal/testfiles, data/generations).
var realFiles = []string{
	"math500-qwen3-4b-base-greedy/qwen-boxed__test_qwen-boxed_-1_seed0_t0.0_s0_e-1.jsonl",
	"math500-qwen3-4b-base-greedy/qwen25-math-cot__test_qwen25-math-cot_-1_seed0_t0.0_s0_e-1.jsonl",
	"math500-qwen3-4b-base-greedy/long-cot__test_long-cot_-1_seed0_t0.0_s0_e-1.jsonl",
	"math500-qwen3-4b-base-greedy/long-cot-boxed__test_long-cot-boxed_-1_seed0_t0.0_s0_e-1.jsonl",
	"math100-qwen25-math-instruct-maj8-example/math_cot_100.jsonl",
	"gsm8k-openai-gpt3-example-solutions/example_model_solutions.jsonl",
}

// unlicensedFiles are the labelled files of the GSM8K SFT-vs-PPO pair,
// which only the unlicensed folder has (testfiles.Unlicensed).
var unlicensedFiles = []string{
	"gsm8k30-qwen25-1.5b-sft-vs-rlvr-ppo/results_2048_batched/sft_raw.jsonl",
	"gsm8k30-qwen25-1.5b-sft-vs-rlvr-ppo/results_2048_batched/rl_raw.jsonl",
	"gsm8k30-qwen25-1.5b-sft-vs-rlvr-ppo/results_1024_cuda/sft_raw.jsonl",
	"gsm8k30-qwen25-1.5b-sft-vs-rlvr-ppo/results_1024_cuda/rl_raw.jsonl",
	"gsm8k30-qwen25-1.5b-sft-vs-rlvr-ppo/trajectory/step-100/rl_raw.jsonl",
	"gsm8k30-qwen25-1.5b-sft-vs-rlvr-ppo/trajectory/step-300/rl_raw.jsonl",
	"gsm8k30-qwen25-1.5b-sft-vs-rlvr-ppo/trajectory/step-500/rl_raw.jsonl",
	"gsm8k30-qwen25-1.5b-sft-vs-rlvr-ppo/trajectory/step-1000/rl_raw.jsonl",
}

type labelledSample struct {
	file string
	cases.Sample
}

func loadRealSamples(t testing.TB, files []string) []labelledSample {
	var out []labelledSample
	for _, f := range files {
		var path string
		if strings.HasPrefix(f, "gsm8k30-") {
			path = testfiles.Unlicensed(t, "generations/"+f)
		} else {
			path = testfiles.Data(t, "generations/"+f)
		}
		fh, err := os.Open(path)
		if err != nil {
			t.Fatalf("open %s: %v", f, err)
		}
		err = cases.ReadSamples(fh, func(s cases.Sample) error {
			if s.Label == nil {
				return fmt.Errorf("sample %s has no label", s.ID)
			}
			out = append(out, labelledSample{file: f, Sample: s})
			return nil
		})
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return out
}

func verifySample(s cases.Sample) verify.Verdict {
	return Check(s.Reference, s.Completion, Options{PredIsCompletion: true, GoldIsCompletion: s.ReferenceIsSolution})
}

// knownDisagreement is one line of testdata/realdata_disagreements.jsonl: a
// sample where Reach's verdict differs from the file's label, with the
// verdict Reach believes right and why.
type knownDisagreement struct {
	File      string `json:"file"`
	ID        string `json:"id"`
	Label     bool   `json:"label"`
	Reach     string `json:"reach"`
	Gold      string `json:"gold"`
	Extracted string `json:"extracted"`
	Class     string `json:"class"`
	// LabelError: the file's label is wrong (Reach's verdict is the right
	// one); false where the label is defensible and Reach's policy differs.
	LabelError bool   `json:"label_error"`
	Why        string `json:"why"`
}

func TestRealCompletionsAgreeWithLabels(t *testing.T) { agreeWithLabels(t, realFiles) }

// TestRealCompletionsAgreeWithLabelsUnlicensed is the same on the GSM8K
// SFT-vs-PPO rollouts where the unlicensed folder is present.
func TestRealCompletionsAgreeWithLabelsUnlicensed(t *testing.T) { agreeWithLabels(t, unlicensedFiles) }

// agreeWithLabels checks Reach's verdicts on files against their labels:
// every disagreement is in the fixture, every fixture entry of these files
// still disagrees, and at least 99% agree.
func agreeWithLabels(t *testing.T, files []string) {
	samples := loadRealSamples(t, files)
	known := map[string]knownDisagreement{}
	f, err := os.Open(filepath.Join("testdata", "realdata_disagreements.jsonl"))
	if err != nil {
		t.Fatalf("open fixture: %v", err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		var d knownDisagreement
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("fixture: %v", err)
		}
		if d.Class == "" || d.Why == "" {
			t.Errorf("fixture entry %s %s lacks class or why", d.File, d.ID)
		}
		if slices.Contains(files, d.File) {
			known[d.File+"#"+d.ID] = d
		}
	}
	f.Close()

	type tally struct{ n, agree int }
	perSource := map[string]*tally{}
	total := tally{}
	seen := map[string]bool{}
	classes := map[string]int{}
	labelErrors := 0
	var unexplained []string
	for _, s := range samples {
		v := verifySample(s.Sample)
		src := strings.SplitN(s.file, "/", 2)[0]
		if perSource[src] == nil {
			perSource[src] = &tally{}
		}
		perSource[src].n++
		total.n++
		if v.IsCorrect() == *s.Label {
			perSource[src].agree++
			total.agree++
			continue
		}
		key := s.file + "#" + s.ID
		d, ok := known[key]
		if !ok || d.Reach != string(v.Status) || d.Label != *s.Label {
			line, _ := json.Marshal(knownDisagreement{File: s.file, ID: s.ID, Label: *s.Label, Reach: string(v.Status),
				Gold: s.Reference, Extracted: v.Extracted, Class: "?", Why: v.Rule + ": " + v.Reason})
			unexplained = append(unexplained, string(line))
			continue
		}
		seen[key] = true
		classes[d.Class]++
		if d.LabelError {
			labelErrors++
		}
	}
	srcs := make([]string, 0, len(perSource))
	for k := range perSource {
		srcs = append(srcs, k)
	}
	sort.Strings(srcs)
	var b strings.Builder
	for _, k := range srcs {
		x := perSource[k]
		fmt.Fprintf(&b, "%-46s %6d %6d %7.2f%%\n", k, x.n, x.agree, 100*float64(x.agree)/float64(x.n))
	}
	fmt.Fprintf(&b, "%-46s %6d %6d %7.2f%%\n", "TOTAL", total.n, total.agree, 100*float64(total.agree)/float64(total.n))
	t.Logf("agreement with file labels\n%s", b.String())
	for c, n := range classes {
		t.Logf("disagreement class %-28s %d", c, n)
	}
	t.Logf("%d of %d disagreements are label errors of the file's grader (the rest: the file's label is defensible, Reach's policy differs)",
		labelErrors, total.n-total.agree)
	for _, u := range unexplained {
		t.Errorf("disagreement not in fixture: %s", u)
	}
	for k := range known {
		if !seen[k] {
			t.Errorf("fixture entry %s no longer disagrees (or changed verdict): remove or update it", k)
		}
	}
	if rate := float64(total.agree) / float64(total.n); rate < 0.99 {
		t.Errorf("agreement %.2f%% < 99%%", 100*rate)
	}
}

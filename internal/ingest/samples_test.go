package ingest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/testfiles"
)

// tally is what a samples file adds up to.
type tally struct {
	samples, correct, verdicts int
	perProblem                 map[string]int // samples per problem
	solved                     map[string]bool
	order                      []string // problem keys in first-seen order
}

func readTally(t *testing.T, rel string, f Format, m *Mapping) (tally, []Sample) {
	t.Helper()
	tl := tally{perProblem: map[string]int{}, solved: map[string]bool{}}
	var firsts []Sample // the first sample of each problem
	next := map[string]int{}
	err := ReadSamples(open(t, rel), filepath.Base(rel), f, m, func(s Sample) error {
		if _, ok := tl.perProblem[s.ProblemKey]; !ok {
			tl.order = append(tl.order, s.ProblemKey)
			firsts = append(firsts, s)
		}
		if s.SampleIndex != next[s.ProblemKey] {
			t.Fatalf("line %d: problem %s sample index %d, want %d", s.Line, s.ProblemKey, s.SampleIndex, next[s.ProblemKey])
		}
		next[s.ProblemKey]++
		tl.samples++
		tl.perProblem[s.ProblemKey]++
		if s.Correct != nil {
			tl.verdicts++
			if *s.Correct {
				tl.correct++
				tl.solved[s.ProblemKey] = true
			}
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatalf("ReadSamples(%s): %v", rel, err)
	}
	return tl, firsts
}

func TestQwenEvalRealFiles(t *testing.T) {
	dir := "generations/math500-qwen3-4b-base-greedy/"
	for _, tc := range []struct {
		prompt  string
		correct int
	}{{"qwen-boxed", 379}, {"qwen25-math-cot", 375}, {"long-cot", 379}, {"long-cot-boxed", 375}} {
		t.Run(tc.prompt, func(t *testing.T) {
			rel := dir + tc.prompt + "__test_" + tc.prompt + "_-1_seed0_t0.0_s0_e-1.jsonl"
			if f, _ := sniffFile(t, rel); f != FormatQwenEval {
				t.Fatalf("Sniff = %q", f)
			}
			tl, firsts := readTally(t, rel, FormatQwenEval, nil)
			if tl.samples != 500 || len(tl.perProblem) != 500 || tl.verdicts != 500 || tl.correct != tc.correct {
				t.Errorf("samples %d problems %d verdicts %d correct %d, want 500/500/500/%d", tl.samples, len(tl.perProblem), tl.verdicts, tl.correct, tc.correct)
			}
			if tl.order[0] != "0" || tl.order[499] != "499" || firsts[499].Line != 500 {
				t.Errorf("keys %s..%s, last line %d", tl.order[0], tl.order[499], firsts[499].Line)
			}
			s := firsts[0]
			if s.FinishReason == "" || s.Extracted == "" || s.Completion == "" {
				t.Errorf("sample 0 = %+v", s)
			}
		})
	}
	// Spot check: qwen25-math-cot problem 0 ran out of tokens and extracted "3" (wrong).
	_, firsts := readTally(t, dir+"qwen25-math-cot__test_qwen25-math-cot_-1_seed0_t0.0_s0_e-1.jsonl", FormatQwenEval, nil)
	if s := firsts[0]; s.FinishReason != "length" || s.Extracted != "3" || s.Correct == nil || *s.Correct ||
		!strings.HasPrefix(s.Completion, ":convert the point $(0,3)$") {
		t.Errorf("qwen25-math-cot sample 0 = %+v", s)
	}
}

func TestQwenEvalMultiSample(t *testing.T) {
	rel := "generations/math100-qwen25-math-instruct-maj8-example/math_cot_100.jsonl"
	if f, _ := sniffFile(t, rel); f != FormatQwenEval {
		t.Fatalf("Sniff = %q", f)
	}
	tl, firsts := readTally(t, rel, FormatQwenEval, nil)
	if tl.samples != 800 || len(tl.perProblem) != 100 || tl.correct != 728 || len(tl.solved) != 96 {
		t.Errorf("samples %d problems %d correct %d solved %d, want 800/100/728/96", tl.samples, len(tl.perProblem), tl.correct, len(tl.solved))
	}
	for k, n := range tl.perProblem {
		if n != 8 {
			t.Errorf("problem %s: %d samples", k, n)
		}
	}
	if s := firsts[0]; s.FinishReason != "" || s.Extracted != "420" || !*s.Correct { // this file has no finish_reason
		t.Errorf("sample 0 = %+v", s)
	}
}

// gsm8kRollouts is the mapping Sniff must guess for the GSM8K SFT-vs-RLVR rollout files.
var gsm8kRollouts = Mapping{ProblemID: "qid", List: "rollouts", Completion: "text", Correct: "correct", Extracted: "pred_token", SampleIndex: "rollout", Reference: "gold"}

func TestGSM8KRolloutsRealFiles(t *testing.T) { testGSM8KRolloutsRealFiles(t) }

// TestGSM8KRolloutsRealFilesUnlicensed is TestGSM8KRolloutsRealFiles on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestGSM8KRolloutsRealFiles runs on the stand-in.
func TestGSM8KRolloutsRealFilesUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testGSM8KRolloutsRealFiles(t)
}

func testGSM8KRolloutsRealFiles(t *testing.T) {
	dir := "generations/gsm8k30-qwen25-1.5b-sft-vs-rlvr-ppo/"
	facts := testfiles.Facts(t)
	files := facts.Correct // file -> total correct rollouts (= sum of n_correct)
	solved := map[string]map[string]bool{}
	for file, correct := range files {
		t.Run(file, func(t *testing.T) {
			f, m := sniffFile(t, dir+file)
			if f != FormatMapped || m == nil || *m != gsm8kRollouts {
				t.Fatalf("Sniff = %q %+v, want mapped %+v", f, m, gsm8kRollouts)
			}
			tl, _ := readTally(t, dir+file, f, m)
			if tl.samples != 240 || len(tl.perProblem) != 30 || tl.verdicts != 240 || tl.correct != correct {
				t.Errorf("samples %d problems %d verdicts %d correct %d, want 240/30/240/%d", tl.samples, len(tl.perProblem), tl.verdicts, tl.correct, correct)
			}
			if nc := sumNCorrect(t, dir+file); nc != tl.correct {
				t.Errorf("sum of correct %d != sum of n_correct %d", tl.correct, nc)
			}
			solved[file] = tl.solved
		})
	}
	// The Venn for the 1024-token pair (real pair: both 26, SFT-only 2 (qid 22, 23), RL-only 1, neither 1).
	sft, rl := solved["results_1024_cuda/sft_raw.jsonl"], solved["results_1024_cuda/rl_raw.jsonl"]
	var both, neither int
	var sftOnly, rlOnly []string
	for q := range 30 {
		k := itoa(q)
		switch {
		case sft[k] && rl[k]:
			both++
		case sft[k]:
			sftOnly = append(sftOnly, k)
		case rl[k]:
			rlOnly = append(rlOnly, k)
		default:
			neither++
		}
	}
	sort.Strings(sftOnly)
	if both != facts.Both || !slices.Equal(sftOnly, facts.BaseOnly) || len(rlOnly) != facts.RLOnly || neither != facts.Neither {
		t.Errorf("both %d sft-only %v rl-only %v neither %d", both, sftOnly, rlOnly, neither)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// sumNCorrect adds up the file's own n_correct fields, read independently of the package.
func sumNCorrect(t *testing.T, rel string) int {
	b, err := os.ReadFile(dataPath(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var row struct {
			NCorrect int `json:"n_correct"`
		}
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatal(err)
		}
		sum += row.NCorrect
	}
	return sum
}

func TestGSM8KOpenAISolutions(t *testing.T) {
	rel := "generations/gsm8k-openai-gpt3-example-solutions/example_model_solutions.jsonl"
	f, m := sniffFile(t, rel)
	want := Mapping{Completion: "6b_finetuning.solution", Correct: "6b_finetuning.is_correct", Question: "question", Reference: "ground_truth"}
	if f != FormatMapped || *m != want {
		t.Fatalf("Sniff = %q %+v, want mapped %+v", f, m, want)
	}
	for system, correct := range map[string]int{"6b_finetuning": 286, "6b_verification": 515, "175b_finetuning": 458, "175b_verification": 742} {
		m := Mapping{Completion: system + ".solution", Correct: system + ".is_correct"}
		tl, firsts := readTally(t, rel, FormatMapped, &m)
		if tl.samples != 1319 || len(tl.perProblem) != 1319 || tl.correct != correct {
			t.Errorf("%s: samples %d problems %d correct %d, want 1319/1319/%d", system, tl.samples, len(tl.perProblem), tl.correct, correct)
		}
		// No id field: the key is the 0-based line, matching Problem.Index in gsm8k test.jsonl.
		if firsts[0].ProblemKey != "0" || firsts[1318].ProblemKey != "1318" || firsts[0].Completion == "" ||
			(system == "175b_verification") != strings.HasSuffix(firsts[0].Completion, "\nA: 18") {
			t.Errorf("%s: keys %q..%q, sample 0 %q", system, firsts[0].ProblemKey, firsts[1318].ProblemKey, firsts[0].Completion)
		}
	}
}

func TestHumanEvalResultsRealFiles(t *testing.T) {
	for _, tc := range []struct {
		file            string
		passed, solved  int
		firstPassed     bool
		firstReasonPref string
	}{{"mistral", 533, 71, true, "passed"}, {"zephyr", 531, 82, false, "failed: "}} {
		t.Run(tc.file, func(t *testing.T) {
			rel := "humaneval/samples-mistral-vs-zephyr/" + tc.file + "_samples.jsonl_results.jsonl"
			if f, _ := sniffFile(t, rel); f != FormatHumanEvalResults {
				t.Fatalf("Sniff = %q", f)
			}
			tl, firsts := readTally(t, rel, FormatHumanEvalResults, nil)
			if tl.samples != 1640 || len(tl.perProblem) != 164 || tl.correct != tc.passed || len(tl.solved) != tc.solved {
				t.Errorf("samples %d tasks %d passed %d solved %d, want 1640/164/%d/%d", tl.samples, len(tl.perProblem), tl.correct, len(tl.solved), tc.passed, tc.solved)
			}
			for k, n := range tl.perProblem {
				if n != 10 {
					t.Errorf("%s: %d samples", k, n)
				}
			}
			s := firsts[0]
			if s.ProblemKey != "HumanEval/0" || *s.Correct != tc.firstPassed || !strings.HasPrefix(s.Reason, tc.firstReasonPref) ||
				!strings.Contains(s.Completion, "for i in range(len(numbers)") {
				t.Errorf("sample 0 = %+v", s)
			}
		})
	}
}

func TestCountsCSVRealFiles(t *testing.T) {
	for _, tc := range []struct {
		file                string
		c, solved, allRight int
	}{{"qwen2.5-7b-base.csv", 39291, 481, 7}, {"qwen2.5-7b-simplerl-zoo.csv", 49877, 465, 269}} {
		t.Run(tc.file, func(t *testing.T) {
			rel := "generations/math500-qwen25-7b-base-vs-simplerl-counts/" + tc.file
			if f, _ := sniffFile(t, rel); f != FormatCountsCSV {
				t.Fatalf("Sniff = %q", f)
			}
			var rows, n, c, solved, allRight int
			var first Count
			err := ReadSamples(open(t, rel), tc.file, FormatCountsCSV, nil, nil, func(ct Count) error {
				if rows == 0 {
					first = ct
				}
				rows++
				n += ct.N
				c += ct.C
				if ct.C > 0 {
					solved++
				}
				if ct.C == ct.N {
					allRight++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// pass@1 = 39291/64000 = 61.39% (base) and 49877/64000 = 77.93% (RL): the reproduction's figures.
			if rows != 500 || n != 64000 || c != tc.c || solved != tc.solved || allRight != tc.allRight {
				t.Errorf("rows %d n %d c %d solved %d all-right %d", rows, n, c, solved, allRight)
			}
			if first.ProblemKey != "test/precalculus/807.json" || first.N != 128 || first.Line != 2 {
				t.Errorf("first row %+v", first)
			}
		})
	}
}

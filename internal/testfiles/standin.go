package testfiles

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// GSM8KProbe is the folder the GSM8K SFT-vs-PPO rollout tests read:
// in a test whose top-level name contains "Unlicensed" the real
// generations/gsm8k30-qwen25-1.5b-sft-vs-rlvr-ppo (see Unlicensed), in any
// other test the stand-in StandIn writes in the same layout from carried
// data. One body serves both: TestX runs on the stand-in everywhere and
// TestXUnlicensed on the real pair where it is present.
func GSM8KProbe(t testing.TB) string {
	t.Helper()
	if unlicensedTest(t) {
		return Unlicensed(t, GSM8KFolder)
	}
	dir := t.TempDir()
	if err := WriteStandIn(dir); err != nil {
		t.Fatalf("stand-in for the GSM8K rollouts: %v", err)
	}
	return dir
}

// unlicensedTest reports whether t's top-level test is named for the
// unlicensed data (the convention CI selects them by).
func unlicensedTest(t testing.TB) bool {
	top, _, _ := strings.Cut(t.Name(), "/")
	return strings.Contains(top, "Unlicensed")
}

// StandInSource is the carried file the stand-in is made from: 100 MATH
// problems with 8 sampled, labelled texts each (Qwen2.5-Math-Instruct, MIT).
const StandInSource = "data/generations/math100-qwen25-math-instruct-maj8-example/math_cot_100.jsonl"

// StandInSteps are the PPO steps of the stand-in's trajectory folder, the
// real pair's steps, and how far each moves from the SFT counts towards
// the RL ones.
var StandInSteps = []struct {
	Step int
	Frac float64
}{{100, 0.2}, {300, 0.4}, {500, 0.6}, {1000, 0.8}}

// WriteStandIn writes into dir a stand-in for the unlicensed GSM8K
// SFT-vs-PPO folder, same file names and row layout (one row per problem,
// qid, question, gold, n_correct, rollouts[8] with text, pred_value,
// pred_token, correct), made from StandInSource: 30 problems (the 14 whose
// 8 samples are not all right, then the first 16 that are) with their real
// texts and labels. The "SFT" file keeps each problem's 8 samples; the
// "RL" file redraws them from the same problem's texts with more right
// ones (twice the SFT count, up to 8), as RL sharpening does, except that
// two problems lose every right sample (base-only) and one is unsolved by
// SFT (its wrong texts only) and solved by RL (RL-only): solved sets both
// 23, base-only 2, RL-only 1, neither 4. results_2048_batched holds the
// same files as results_1024_cuda (one budget); trajectory/step-N moves
// each count part of the way from SFT to RL. The bytes depend only on the
// source file.
func WriteStandIn(dir string) error {
	src := Resolve(StandInSource)
	probs, err := readMath100(src)
	if err != nil {
		return err
	}
	var low, high []m100
	for _, p := range probs {
		if p.correct() < 8 {
			low = append(low, p)
		} else {
			high = append(high, p)
		}
	}
	if len(low) != 14 || len(high) < 16 {
		return fmt.Errorf("%s: %d problems with a wrong sample, %d without; want 14 and at least 16", src, len(low), len(high))
	}
	sel := append(low, high[:16]...)
	slices.SortFunc(sel, func(a, b m100) int { return a.idx - b.idx })
	// Roles of the mixed problems (some samples right), in order.
	var mixed []int
	for i, p := range sel {
		if c := p.correct(); c > 0 && c < 8 {
			mixed = append(mixed, i)
		}
	}
	baseOnly := map[int]bool{mixed[0]: true, mixed[1]: true}
	rlOnly := mixed[2]

	var sftC, rlC []int
	for i, p := range sel {
		c := p.correct()
		s, r := c, min(8, 2*c)
		switch {
		case baseOnly[i]:
			r = 0
		case i == rlOnly:
			s = 0
		}
		sftC, rlC = append(sftC, s), append(rlC, r)
	}

	var ds strings.Builder
	for q, p := range sel {
		line, _ := json.Marshal(struct {
			QID      int    `json:"qid"`
			Question string `json:"question"`
			Gold     string `json:"gold"`
		}{q, p.Question, p.Gold})
		ds.Write(line)
		ds.WriteByte('\n')
	}
	files := map[string]string{"data/gsm8k_subset.jsonl": ds.String()}
	sft := rows(sel, "sft", "stand-in: Qwen2.5-Math-Instruct samples (SFT role)", func(i int) int { return sftC[i] }, true)
	rl := rows(sel, "rl", "stand-in: the same texts redrawn (RL role)", func(i int) int { return rlC[i] }, false)
	for _, budget := range []string{"results_1024_cuda", "results_2048_batched"} {
		files[budget+"/sft_raw.jsonl"], files[budget+"/rl_raw.jsonl"] = sft, rl
	}
	for _, st := range StandInSteps {
		files[fmt.Sprintf("trajectory/step-%d/rl_raw.jsonl", st.Step)] = rows(sel, "rl", fmt.Sprintf("stand-in: RL role at step %d", st.Step), func(i int) int {
			return int(math.Round(float64(sftC[i]) + float64(rlC[i]-sftC[i])*st.Frac))
		}, false)
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("stand-in: %w", err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return fmt.Errorf("stand-in: %w", err)
		}
	}
	return nil
}

// m100 is one row of StandInSource.
type m100 struct {
	idx      int
	Question string
	Gold     string
	texts    []string
	preds    []string
	scores   []bool
}

func (p m100) correct() int {
	n := 0
	for _, s := range p.scores {
		if s {
			n++
		}
	}
	return n
}

func readMath100(path string) ([]m100, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("stand-in source: %w", err)
	}
	defer f.Close()
	var out []m100
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r struct {
			Idx      int      `json:"idx"`
			Question string   `json:"question"`
			GT       string   `json:"gt"`
			Code     []string `json:"code"`
			Pred     []string `json:"pred"`
			Score    []bool   `json:"score"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, len(out)+1, err)
		}
		if len(r.Code) != 8 || len(r.Pred) != 8 || len(r.Score) != 8 {
			return nil, fmt.Errorf("%s line %d: %d texts, %d predictions, %d scores; want 8 each", path, len(out)+1, len(r.Code), len(r.Pred), len(r.Score))
		}
		out = append(out, m100{r.Idx, r.Question, r.GT, r.Code, r.Pred, r.Score})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

type rollout struct {
	Rollout       int      `json:"rollout"`
	PredValue     *float64 `json:"pred_value"`
	PredToken     string   `json:"pred_token"`
	ExtractMethod string   `json:"extract_method"`
	Correct       bool     `json:"correct"`
	Text          string   `json:"text"`
}

// rows is one model's file: problem i gets count(i) right samples. With
// keep, a problem whose count is its own keeps its 8 samples in order;
// otherwise the right texts come first, cycled, then the wrong ones.
func rows(sel []m100, alias, name string, count func(int) int, keep bool) string {
	var b strings.Builder
	for q, p := range sel {
		c := count(q)
		var idx []int
		if keep && c == p.correct() {
			idx = []int{0, 1, 2, 3, 4, 5, 6, 7}
		} else {
			var right, wrong []int
			for i, s := range p.scores {
				if s {
					right = append(right, i)
				} else {
					wrong = append(wrong, i)
				}
			}
			for i := range 8 {
				if i < c {
					idx = append(idx, right[i%len(right)])
				} else {
					idx = append(idx, wrong[(i-c)%len(wrong)])
				}
			}
		}
		ros := make([]rollout, 8)
		for i, j := range idx {
			ro := rollout{Rollout: i, PredToken: p.preds[j], ExtractMethod: "boxed", Correct: p.scores[j], Text: p.texts[j]}
			if v, err := strconv.ParseFloat(p.preds[j], 64); err == nil {
				ro.PredValue = &v
			}
			ros[i] = ro
		}
		var gold *float64
		if v, err := strconv.ParseFloat(p.Gold, 64); err == nil {
			gold = &v
		}
		line, _ := json.Marshal(struct {
			Alias     string    `json:"model_alias"`
			Name      string    `json:"model_name"`
			QID       int       `json:"qid"`
			Question  string    `json:"question"`
			Gold      string    `json:"gold"`
			GoldValue *float64  `json:"gold_value"`
			NCorrect  int       `json:"n_correct"`
			N         int       `json:"n_rollouts"`
			Rollouts  []rollout `json:"rollouts"`
		}{alias, name, q, p.Question, p.Gold, gold, c, 8, ros})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// GSM8KFacts are what tests expect of the folder GSM8KProbe gives.
type GSM8KFacts struct {
	Correct  map[string]int // file -> right rollouts (the sum of n_correct)
	Both     int            // solved by both models of results_1024_cuda
	BaseOnly []string       // qids solved by SFT only, sorted as strings
	RLOnly   int
	Neither  int
	// References of problems 0 and 29 of data/gsm8k_subset.jsonl.
	FirstRef, LastRef string
	// BaseOnly3 is a base-only problem that SFT solved in 3 of 8 rollouts.
	BaseOnly3 int
	// FirstQuestion is how problem 0's statement starts.
	FirstQuestion string
	// Reverified: both and neither when Reach's verifier re-grades the pair
	// (the stand-in's labels come from another grader, which marks one
	// problem's answers wrong that Reach accepts).
	ReBoth, ReNeither int
}

// Solved is how many problems each model of results_1024_cuda solved.
func (f GSM8KFacts) Solved() (sft, rl int) { return f.Both + len(f.BaseOnly), f.Both + f.RLOnly }

// Facts is GSM8KFacts for t's folder: the real pair's (counted in its
// SOURCE.md and the issue) in an Unlicensed test, the stand-in's otherwise.
func Facts(t testing.TB) GSM8KFacts {
	if unlicensedTest(t) {
		return GSM8KFacts{
			Correct: map[string]int{"results_1024_cuda/rl_raw.jsonl": 175, "results_1024_cuda/sft_raw.jsonl": 135,
				"results_2048_batched/rl_raw.jsonl": 175, "results_2048_batched/sft_raw.jsonl": 133,
				"trajectory/step-100/rl_raw.jsonl": 156, "trajectory/step-300/rl_raw.jsonl": 149,
				"trajectory/step-500/rl_raw.jsonl": 159, "trajectory/step-1000/rl_raw.jsonl": 173},
			Both: 26, BaseOnly: []string{"22", "23"}, RLOnly: 1, Neither: 1, FirstRef: "52", LastRef: "106", BaseOnly3: 22,
			FirstQuestion: "Jared is trying to increase his typing speed", ReBoth: 26, ReNeither: 1,
		}
	}
	return GSM8KFacts{
		Correct: map[string]int{"results_1024_cuda/rl_raw.jsonl": 180, "results_1024_cuda/sft_raw.jsonl": 166,
			"results_2048_batched/rl_raw.jsonl": 180, "results_2048_batched/sft_raw.jsonl": 166,
			"trajectory/step-100/rl_raw.jsonl": 168, "trajectory/step-300/rl_raw.jsonl": 172,
			"trajectory/step-500/rl_raw.jsonl": 174, "trajectory/step-1000/rl_raw.jsonl": 178},
		Both: 23, BaseOnly: []string{"17", "6"}, RLOnly: 1, Neither: 4, FirstRef: "420", LastRef: "50,625", BaseOnly3: 6,
		FirstQuestion: "What is $10.0000198", ReBoth: 24, ReNeither: 3,
	}
}

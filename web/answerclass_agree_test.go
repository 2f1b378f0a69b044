package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/examples"
	"github.com/reach-lab/reach/internal/export"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testfiles"
	"github.com/reach-lab/reach/web"
)

// One answer, one class: the problem page's answer distribution, maj@k,
// answer diversity and the export's answer_class put every sample in the
// same class. maj@k and diversity are recomputed here from the page's
// classes and must equal the statistics job's to the bit; each exported
// record's answer_class must name its page class. Run on the shipped
// examples, the GSM8K pair (stand-in here, real in the Unlicensed test)
// with the file's labels and re-verified, and a file whose labels call
// equivalent spellings differently (so classes merge into the correct one).
func TestAnswerClassesAgree(t *testing.T) { testAnswerClassesAgree(t) }

// TestAnswerClassesAgreeUnlicensed is TestAnswerClassesAgree on the real
// GSM8K SFT-vs-PPO pair where the unlicensed folder is present.
func TestAnswerClassesAgreeUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testAnswerClassesAgree(t)
}

func testAnswerClassesAgree(t *testing.T) {
	a := startApp(t)
	ctx := context.Background()
	specs := examples.Specs()
	dir := testfiles.GSM8KProbe(t)
	for _, reverify := range []bool{false, true} {
		specs = append(specs, intake.Spec{Name: fmt.Sprintf("gsm8k reverify=%v", reverify), Reverify: reverify, AcceptGuess: true,
			Dataset: intake.LocalFile(filepath.Join(dir, "data/gsm8k_subset.jsonl")),
			Models: []intake.Model{{Name: "SFT", File: intake.LocalFile(filepath.Join(dir, "results_1024_cuda/sft_raw.jsonl"))},
				{Name: "PPO", File: intake.LocalFile(filepath.Join(dir, "results_1024_cuda/rl_raw.jsonl"))}}})
	}
	specs = append(specs, mixedLabels(t))
	checked := 0
	for _, spec := range specs {
		id, _, err := intake.Create(ctx, a.st, a.client, spec)
		if err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		a.waitReady(t, id, 3*time.Minute)
		if err := jobs.ComputeStats(ctx, a.st, id, 50); err != nil {
			t.Fatalf("%s: statistics: %v", spec.Name, err)
		}
		checked += checkClassesAgree(t, a.st, id, spec.Name)
	}
	if checked == 0 {
		t.Fatal("no sample with an answer was checked")
	}
	t.Logf("%d samples with an answer in the same class on the page, in maj@k, diversity and the export", checked)
}

// mixedLabels is a file whose labels disagree with the verifier's
// equivalence: "0.5" labelled wrong where "1/2" is right, "3" right and
// "3.0" wrong, so the page's correct class holds samples graded incorrect.
func mixedLabels(t *testing.T) intake.Spec {
	ds := jsonl(t, map[string]string{"id": "h", "problem": "Half of one?", "answer": "1/2"},
		map[string]string{"id": "t", "problem": "One plus two?", "answer": "3"})
	line := func(p string, i int, ans string, ok bool) map[string]any {
		return map[string]any{"problem_id": p, "sample_index": i, "completion": "So " + ans + ".", "extracted": ans, "correct": ok}
	}
	base := jsonl(t, line("h", 0, "1/2", true), line("h", 1, "0.5", false), line("h", 2, "0.5", false), line("h", 3, "7", false),
		line("t", 0, "3", true), line("t", 1, "3.0", false), line("t", 2, "4", false), line("t", 3, "4", false))
	rl := jsonl(t, line("h", 0, `\frac{1}{2}`, true), line("h", 1, "0.5", false), line("h", 2, "7", false), line("h", 3, "7", false),
		line("t", 0, "3.0", false), line("t", 1, "3.0", false), line("t", 2, "4", false), line("t", 3, " 4 ", false))
	return intake.Spec{Name: "mixed labels", Dataset: memFile("d.jsonl", ds),
		Models: []intake.Model{{Name: "base", File: memFile("base.jsonl", base)}, {Name: "rl", File: memFile("rl.jsonl", rl)}}}
}

// checkClassesAgree checks comparison id and returns how many samples with
// an answer it checked.
func checkClassesAgree(t *testing.T, st *store.Store, id int64, name string) int {
	t.Helper()
	ctx := context.Background()
	c, err := st.GetComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Build(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	if !c.HasTexts() {
		return 0
	}
	if rep.Stats.Status != analysis.StatsReady {
		t.Fatalf("%s: statistics %s", name, rep.Stats.Status)
	}
	type pageClasses struct {
		classOf map[string]int
		correct []bool
		label   []string
		kind    string
	}
	pages := map[int64]pageClasses{}
	problems, err := st.Problems(ctx, *c.DatasetID, false)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[int64]string{}
	for _, p := range problems {
		kinds[p.ID] = p.Kind
	}
	for _, row := range rep.Rows {
		counts, err := st.AnswerCounts(ctx, id, row.ProblemID)
		if err != nil {
			t.Fatal(err)
		}
		var pc pageClasses
		pc.classOf, pc.correct, pc.label = web.PageAnswerClasses(c, counts, kinds[row.ProblemID])
		pc.kind = kinds[row.ProblemID]
		pages[row.ProblemID] = pc
	}
	// pageClass is the class the page puts a sample in: -1 without an answer.
	pageClass := func(pid int64, text string, correct bool) (int, bool) {
		pc := pages[pid]
		if correct {
			for i, ok := range pc.correct {
				if ok {
					return i, true
				}
			}
		}
		text = strings.Trim(text, " ")
		if text == "" {
			return -1, false
		}
		i, ok := pc.classOf[text]
		if !ok {
			t.Fatalf("%s: problem %d: answer %q is not on the page", name, pid, text)
		}
		return i, pc.correct[i]
	}
	checked := 0
	for m, mr := range rep.Models {
		answers, err := st.AnswersForRun(ctx, mr.RunID)
		if err != nil {
			t.Fatal(err)
		}
		var votes [][]passk.Vote
		for j, row := range rep.Rows {
			var vs []passk.Vote
			sizes := map[int]int{}
			correct, answered := 0, 0
			for _, ans := range answers[row.ProblemID] {
				cls, isCorrect := pageClass(row.ProblemID, ans.Extracted, ans.Correct)
				switch {
				case isCorrect:
					vs = append(vs, passk.Vote{Class: 0, Correct: true})
					correct++
				case cls < 0:
					vs = append(vs, passk.Vote{Class: passk.NoAnswer})
				default:
					vs = append(vs, passk.Vote{Class: cls + 1})
					sizes[cls]++
				}
				if cls >= 0 || isCorrect {
					answered++
					checked++
				}
			}
			votes = append(votes, vs)
			if pages[row.ProblemID].kind == "code" || rep.Diversity == nil || rep.Diversity.Models[m] == nil || answered == 0 {
				continue
			}
			var sz []int
			if correct > 0 {
				sz = append(sz, correct)
			}
			for _, n := range sizes {
				sz = append(sz, n)
			}
			var pd *analysis.ProblemDiversity
			for i := range rep.Diversity.Models[m].PerProblem {
				if rep.Diversity.Models[m].PerProblem[i].ProblemID == row.Key {
					pd = &rep.Diversity.Models[m].PerProblem[i]
				}
			}
			h, _ := passk.AnswerEntropy(sz)
			if pd == nil || pd.Distinct != len(sz) || math.Abs(pd.Entropy-h) > 1e-12 {
				t.Errorf("%s: %s problem %s (row %d): diversity %+v; the page's classes give %d classes, %.6f bits", name, mr.Name, row.Key, j, pd, len(sz), h)
			}
		}
		if len(mr.MajAtK) == 0 {
			continue
		}
		ks := make([]int, len(mr.MajAtK))
		for i, p := range mr.MajAtK {
			ks[i] = p.K
		}
		want, err := passk.MajCurve(votes, ks)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range mr.MajAtK {
			if math.Abs(p.Value-want[i]) > 1e-12 {
				t.Errorf("%s: %s maj@%d = %.6f; the page's classes give %.6f", name, mr.Name, p.K, p.Value, want[i])
			}
		}
	}
	// The export names each sample's page class.
	var buf bytes.Buffer
	if err := export.Comparison(ctx, &buf, st, id, "jsonl"); err != nil {
		t.Fatal(err)
	}
	keyToID := map[string]int64{}
	for _, p := range problems {
		keyToID[p.Key] = p.ID
		if p.Key == "" {
			keyToID[fmt.Sprint(p.Idx)] = p.ID
		}
	}
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r export.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		pid := keyToID[r.Problem]
		text := r.ExtractedAnswer
		if text == "" {
			text = r.FileExtracted
		}
		want := ""
		if cls, _ := pageClass(pid, text, r.Verdict == store.SampleCorrect); cls >= 0 {
			want = pages[pid].label[cls]
		}
		if r.AnswerClass != want {
			t.Errorf("%s: %s problem %s sample %d: export answer_class %q, the page's class %q", name, r.Model, r.Problem, r.SampleIndex, r.AnswerClass, want)
		}
	}
	return checked
}

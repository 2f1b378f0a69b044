package code

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/reach-lab/reach/internal/verify"
)

// Choosing a harness per file. Released HumanEval files were graded by
// different harnesses, and a file graded under the wrong one reads as 0 %
// (the shipped Mistral/Zephyr completions repeat the prompt's docstring
// flush-left: a syntax error under human-eval, valid under strip-docstrings).
// So when nobody named a harness, Reach runs a few of the file's completions
// under every harness and keeps the one under which they are valid Python
// and, where the file carries labels, agree with them.

// ProbeSize is how many of a file's completions ChooseHarness is meant to
// be given: enough that a harness mismatch (which breaks most completions)
// shows, few enough to cost seconds.
const ProbeSize = 24

// Probe is one completion of a file to try the harnesses on: its problem's
// dataset fields, the text, and the file's label when it has one.
type Probe struct {
	Fields     map[string]string
	Completion string
	Label      *bool
}

// HarnessScore is how one harness did on the probes: how many completions
// gave a program that compiles (Valid), and of those with a label how many
// it graded as the label says (Agree of Labelled).
type HarnessScore struct {
	Harness  string `json:"harness"`
	Valid    int    `json:"valid"`
	Labelled int    `json:"labelled"`
	Agree    int    `json:"agree"`
}

// Choice is the harness ChooseHarness picked, with a sentence saying why
// and every harness's score. Probes counts the completions tried (those of
// problems in human-eval's layout; the harness changes no other).
type Choice struct {
	Harness string
	Why     string
	Probes  int
	Scores  []HarnessScore
}

// ChooseHarness grades probes under every harness with v and returns the
// harness that agrees with the most labels, then gives the most valid
// programs; a tie goes to the earlier harness in Harnesses (human-eval).
// With no probe in human-eval's layout it returns the default harness ("")
// and Probes 0: nothing to choose. It fails when v cannot grade code (a
// verdict NotGraded), so that a missing sandbox never decides the harness.
func ChooseHarness(ctx context.Context, v verify.Verifier, probes []Probe) (Choice, error) {
	var use []Probe
	for _, p := range probes {
		if t, err := ParseTests(p.Fields); err == nil && t.Style == StyleHumanEval && strings.TrimSpace(p.Completion) != "" {
			use = append(use, p)
		}
	}
	if len(use) == 0 {
		return Choice{}, nil
	}
	scores := make([]HarnessScore, len(Harnesses))
	verdicts := make([][]verify.Verdict, len(Harnesses))
	for h := range Harnesses {
		scores[h].Harness = Harnesses[h].Name
		verdicts[h] = make([]verify.Verdict, len(use))
	}
	// One job per distinct program: harnesses that assemble the same program
	// (a plain completion) share its verdict.
	type job struct{ probe, harness int }
	var jobs []job
	same := make([][]int, len(use)) // same[i][h]: the harness whose verdict h reuses
	for i, p := range use {
		t, _ := ParseTests(p.Fields)
		same[i] = make([]int, len(Harnesses))
		srcs := make([]string, len(Harnesses))
		for h := range Harnesses {
			prog, err := assemble(t, Harnesses[h].Name, p.Completion)
			if err != nil {
				return Choice{}, fmt.Errorf("harness %s: %w", Harnesses[h].Name, err)
			}
			srcs[h], same[i][h] = prog.src, h
			for g := range h {
				if srcs[g] == prog.src {
					same[i][h] = g
					break
				}
			}
			if same[i][h] == h {
				jobs = append(jobs, job{i, h})
			}
		}
	}
	var wg sync.WaitGroup
	next := make(chan job)
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				p := verify.Problem{Kind: "code", Harness: Harnesses[j.harness].Name, Fields: use[j.probe].Fields}
				verdicts[j.harness][j.probe] = v.Verify(ctx, p, use[j.probe].Completion)
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Choice{}, err
	}
	for i, p := range use {
		for h := range Harnesses {
			vd := verdicts[same[i][h]][i]
			if vd.Status == verify.NotGraded {
				return Choice{}, fmt.Errorf("choosing a code harness: %s", vd.Reason)
			}
			if vd.Status != verify.Unparseable && !strings.HasPrefix(vd.Reason, "syntax error") {
				scores[h].Valid++
			}
			if p.Label != nil {
				scores[h].Labelled++
				if vd.IsCorrect() == *p.Label {
					scores[h].Agree++
				}
			}
		}
	}
	best := 0
	for h := 1; h < len(scores); h++ {
		if scores[h].Agree > scores[best].Agree || scores[h].Agree == scores[best].Agree && scores[h].Valid > scores[best].Valid {
			best = h
		}
	}
	return Choice{Harness: scores[best].Harness, Probes: len(use), Scores: scores, Why: why(scores, best, len(use))}, nil
}

// why says in one sentence how the chosen harness did against the others.
func why(scores []HarnessScore, best, n int) string {
	part := func(s HarnessScore) string {
		out := fmt.Sprintf("%s: %d valid", s.Harness, s.Valid)
		if s.Labelled > 0 {
			out += fmt.Sprintf(", %d of %d agree with the file's labels", s.Agree, s.Labelled)
		}
		return out
	}
	var others []string
	tie := true
	for h, s := range scores {
		if h == best {
			continue
		}
		others = append(others, part(s))
		if s.Agree != scores[best].Agree || s.Valid != scores[best].Valid {
			tie = false
		}
	}
	head := fmt.Sprintf("chosen automatically on %d of the file's completions", n)
	if tie {
		return fmt.Sprintf("%s: every harness grades them alike (%s), so the default stands", head, part(scores[best]))
	}
	return fmt.Sprintf("%s (%s; %s)", head, part(scores[best]), strings.Join(others, "; "))
}

package analysis

import (
	"context"
	"fmt"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
)

// A model whose answers the verifier mostly cannot find: a harness that asks
// for a marker the verifier does not know (lighteval's "ANSWER: …" before
// the verifier read it), a file of another task, a code harness that leaves
// no valid program. The figures then grade nearly nothing, and the page must
// say so instead of showing 0 % as a result.

// ungradedShare: above this share of a model's samples graded by a fallback
// rule (under the strict policy, which counts none of them) or without a
// readable answer, the model's figures describe the verifier, not the model.
const ungradedShare = 0.5

// UngradedSample is one sample of a model that Reach could not grade from a
// marked final answer: its problem, index, the rule that took its answer
// ("" when there was none), its status and the end of its completion.
type UngradedSample struct {
	Problem string `json:"problem"`
	Index   int    `json:"index"`
	Rule    string `json:"rule"`
	Status  string `json:"status"`
	Tail    string `json:"tail"`
}

// ungraded returns how many of a model's samples count as not graded from
// a marked answer, and of how many: fallback-graded samples count only
// under the strict policy (the lenient one counts them as the Qwen2.5-Math
// evaluator does, on purpose). ok is false without quality figures.
func ungraded(q Quality) (fallback, none, samples int64, ok bool) {
	if q.Samples == nil || *q.Samples == 0 || q.NoAnswer == nil || q.FallbackGraded == nil {
		return 0, 0, 0, false
	}
	if q.GradingPolicy == store.PolicyStrict {
		fallback = *q.FallbackGraded
	}
	return fallback, *q.NoAnswer, *q.Samples, true
}

// mostlyUngraded reports whether a model's samples are mostly not graded
// from a marked answer (see ungradedShare).
func mostlyUngraded(q Quality) bool {
	fb, none, n, ok := ungraded(q)
	return ok && float64(fb+none) > ungradedShare*float64(n)
}

// AttachUngradedExamples gives each model whose samples are mostly not
// graded from a marked answer one such sample (Quality.UngradedExample),
// read from the store, and checks the warnings again. It reads nothing for
// the other models.
func (rep *Report) AttachUngradedExamples(ctx context.Context, st *store.Store) error {
	found := false
	for i := range rep.Models {
		m := &rep.Models[i]
		if !mostlyUngraded(m.Quality) {
			continue
		}
		rules := verify.FallbackRules
		if m.GradingPolicy != store.PolicyStrict {
			rules = nil
		}
		u, ok, err := st.UngradedExample(ctx, m.RunID, rules)
		if err != nil {
			return err
		}
		if ok {
			m.UngradedExample = &UngradedSample{Problem: u.Problem, Index: u.Index, Rule: u.Rule, Status: u.Status, Tail: u.Tail}
			found = true
		}
	}
	if found {
		rep.checkWarnings()
	}
	return nil
}

// checkUngraded: most of a model's samples were graded by a fallback rule
// the strict policy never counts, were unparseable or had no answer. Its
// pass@k is then near 0 because of the verifier or the harness, not the
// model; the warning names the count, the reason and one sample.
func checkUngraded(rep *Report) []Warning {
	var out []Warning
	for _, m := range rep.Models {
		if !mostlyUngraded(m.Quality) {
			continue
		}
		fb, none, n, _ := ungraded(m.Quality)
		var why string
		switch {
		case fb > 0 && none > 0:
			why = fmt.Sprintf("%d had an answer only a fallback rule found (the last number or formula, not a marked final answer, which the strict policy does not count) and %d no answer Reach could read", fb, none)
		case fb > 0:
			why = "their answer was found only by a fallback rule (the last number or formula, not a marked final answer), which the strict policy does not count"
		default:
			why = "Reach could read no answer in them (none found, or unparseable; for code, no program that parses)"
		}
		ex := ""
		if u := m.UngradedExample; u != nil {
			how := "answer found by rule " + u.Rule
			switch {
			case u.Status == "unparseable":
				how = "unparseable"
			case u.Rule == "":
				how = "no answer found"
			}
			ex = fmt.Sprintf(" Example: problem %s, sample %d (%s) ends %q.", u.Problem, u.Index, how, u.Tail)
		}
		out = append(out, Warning{
			Code: "answers-not-graded", Severity: SeverityCritical, Figures: []string{FigureAll}, Models: []string{m.Name},
			Text: fmt.Sprintf("%s: %d of %d samples (%.1f %%) were not graded from a marked final answer: %s. Its figures then measure the grading, not the model: the file may mark answers in a form the verifier does not know, or hold another task's samples.%s Check a problem page; the lenient policy counts fallback answers, and a file's own verdicts can be kept by importing without re-verification.",
				m.Name, fb+none, n, 100*float64(fb+none)/float64(n), why, ex),
		})
	}
	return out
}

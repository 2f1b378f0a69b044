package analysis

import (
	"cmp"
	"fmt"
	"slices"
)

// Warnings: every figure Reach is not sure of says so. A Warning is one
// plain sentence shown at the top of the comparison page (and of share
// links) and listed in the report JSON, naming the figures it affects.
//
// Adding a warning takes three steps:
//
//  1. Make sure the report carries what the check needs (a field of Report,
//     ModelReport or PairReport, filled in ComputeWith from the counts or in
//     AttachQuality / AttachStats from the store).
//  2. Write a Check, func(*Report) []Warning, that returns nothing when all
//     is well. Give each warning a stable Code (kebab-case, it is how tests
//     and scripts find it), a Severity, one sentence of Text with the
//     numbers and model names a reader needs, and the Figures it affects.
//     Offer an Action when a query parameter recomputes the report without
//     the problem (the page turns it into a link).
//  3. Append the Check to checks below and add a unit test that builds a
//     report showing the problem (see warnings_test.go).
//
// Checks run at the end of ComputeWith and again when AttachQuality or
// AttachStats adds data, so a check must be a pure function of the report
// and must tolerate missing data (nil quality fields: counts-only runs).

// Severities of a warning, most serious first.
const (
	// SeverityCritical: a figure is probably wrong as shown.
	SeverityCritical = "critical"
	// SeverityWarning: a figure may mislead unless read with this in mind.
	SeverityWarning = "warning"
	// SeverityInfo: context for reading the figures (e.g. a variant is on).
	SeverityInfo = "info"
)

var severityRank = map[string]int{SeverityCritical: 0, SeverityWarning: 1, SeverityInfo: 2}

// Figures a warning can name (Warning.Figures).
const (
	FigureAll       = "all figures"
	FigurePassK     = "pass@k"
	FigureCrossover = "crossover k*"
	FigureDeltaSE   = "ΔSE"
	FigureSolved    = "solved sets" // Venn, UpSet, base-only list and its tests
	FigureHistogram = "c/n histogram"
	FigureMajK      = "maj@k"
	FigureIntervals = "95% intervals"
)

// Warning is one doubt about the report's figures.
type Warning struct {
	Code     string   `json:"code"`
	Severity string   `json:"severity"`
	Text     string   `json:"text"`
	Figures  []string `json:"figures"`
	// Models names the models concerned, when not all.
	Models []string `json:"models,omitempty"`
	// Action is a way out: the report recomputed with one query
	// parameter set (or removed, when Value is empty).
	Action *WarningAction `json:"action,omitempty"`
}

// WarningAction is a query parameter that recomputes the report without
// the problem a warning names (see Options and the web layer's reportOptions).
type WarningAction struct {
	Label string `json:"label"`
	Param string `json:"param"`
	Value string `json:"value"` // empty: remove the parameter
}

// Check inspects a report and returns its warnings (none when all is well).
type Check func(rep *Report) []Warning

// checks are run in this order; the page lists their warnings by severity,
// then in this order.
var checks = []Check{
	checkComparability,
	checkKMaxCut,
	checkExtrapolated,
	checkShortLeftOut,
	checkUnequalBudgets,
	checkDuplicatedSamples,
	checkFewProblems,
	checkOneSample,
	checkVerdictsDiffer,
	checkMixedVerdicts,
	checkUngraded,
	checkNothingSolved, // last: a more specific warning above explains it
}

// checkWarnings recomputes rep.Warnings from every check.
func (rep *Report) checkWarnings() {
	ws := []Warning{}
	for _, c := range checks {
		ws = append(ws, c(rep)...)
	}
	slices.SortStableFunc(ws, func(a, b Warning) int { return cmp.Compare(severityRank[a.Severity], severityRank[b.Severity]) })
	rep.Warnings = ws
}

// checkKMaxCut: k max is the smallest n over every model and problem, so a
// few problems with fewer samples cut every curve short.
func checkKMaxCut(rep *Report) []Warning {
	b := rep.Budget
	if b.SuggestMinN == 0 {
		return nil
	}
	return []Warning{{
		Code: "k-max-cut", Severity: SeverityWarning, Figures: []string{FigurePassK, FigureCrossover, FigureDeltaSE, FigureSolved},
		Text: fmt.Sprintf("k max is %d because %s fewer samples than the other %d (n ≥ %d there): every curve, the crossover and ΔSE stop at k = %d. Leaving %s out compares up to k = %d.",
			rep.KMax, plural(b.ShortProblems, "problem has", "problems have"), rep.Problems-b.ShortProblems, b.SuggestMinN,
			rep.KMax, map[bool]string{true: "it", false: "them"}[b.ShortProblems == 1], b.SuggestMinN),
		Action: &WarningAction{Label: fmt.Sprintf("Leave out the %s with n < %d", plural(b.ShortProblems, "problem", "problems"), b.SuggestMinN),
			Param: "min_n", Value: fmt.Sprint(b.SuggestMinN)},
	}}
}

// checkShortLeftOut says that Options.MinN left problems out.
func checkShortLeftOut(rep *Report) []Warning {
	if rep.ShortLeftOut == 0 {
		return nil
	}
	return []Warning{{
		Code: "short-problems-left-out", Severity: SeverityInfo, Figures: []string{FigureAll},
		Text: fmt.Sprintf("%s with fewer than %d samples from some model %s left out of every figure (k max %d instead of %d).",
			plural(rep.ShortLeftOut, "problem", "problems"), rep.MinN, isAre(rep.ShortLeftOut), rep.KMax, rep.KMaxAll),
		Action: &WarningAction{Label: "Include them", Param: "min_n"},
	}}
}

// checkUnequalBudgets: a problem counts as solved when c >= 1 among the
// model's own n samples, so a model with more samples on a problem has more
// chances; base-only solves from unequal budgets are not comparable.
func checkUnequalBudgets(rep *Report) []Warning {
	var out []Warning
	for _, p := range rep.Pairs {
		eb := p.EqualBudget
		if eb == nil {
			continue
		}
		favoured := p.Base
		if eb.OtherMore > eb.BaseMore {
			favoured = p.Other
		}
		out = append(out, Warning{
			Code: "unequal-budgets", Severity: SeverityWarning, Figures: []string{FigureSolved}, Models: []string{p.Base, p.Other},
			Text: fmt.Sprintf("Budgets differ: on %s %s has more samples than %s, on %d the reverse, so the solved sets (c ≥ 1 at each model's own n) favour %s. "+
				"At equal budgets (the unbiased pass@k at each problem's smaller n) the expected counts are both %.1f, base-only %.1f, %s-only %.1f, neither %.1f (shown: %d, %d, %d, %d).",
				plural(eb.BaseMore, "problem", "problems"), p.Base, p.Other, eb.OtherMore, favoured,
				eb.Both, eb.BaseOnly, p.Other, eb.OtherOnly, eb.Neither,
				p.Solved.Both, p.Solved.BaseOnly, p.Solved.OtherOnly, p.Solved.Neither),
		})
	}
	return out
}

// DuplicatedShare is the share of a model's checked problems (n ≥ 8,
// completions averaging 32 bytes or more) that must have at most half as
// many distinct texts as samples for checkDuplicatedSamples to warn.
//
// Why a share and not one problem: at a low temperature an easy problem's
// samples repeat by chance. The shipped HumanEval example (T = 0.2, n = 10)
// has 82 of 164 such problems for Mistral-7B-Instruct and 50 for
// Zephyr-7B-alpha, many of them ten copies of one 400-byte function. A
// sampler that reuses a seed repeats every problem's samples, easy or not
// (vLLM with one seed per chunk: 16 distinct texts of 32 on all of them).
const DuplicatedShare = 0.8

// checkDuplicatedSamples: exact duplicates on nearly every problem are
// beyond what chance allows at a sampling temperature that gives diverse
// texts. pass@k then counts the same attempt several times: its intervals
// are too narrow and the curve at k above the distinct texts is not
// pass@k of independent samples.
func checkDuplicatedSamples(rep *Report) []Warning {
	var out []Warning
	for _, m := range rep.Models {
		q := m.Quality
		if q.DuplicatedProblems == nil || q.DuplicatedExample == nil || q.DuplicateChecked == 0 ||
			float64(*q.DuplicatedProblems) < DuplicatedShare*float64(q.DuplicateChecked) {
			continue
		}
		ex := q.DuplicatedExample
		others := ""
		if q.DuplicateChecked > 1 {
			others = fmt.Sprintf(", and %d of its %d problems with n ≥ 8 have at most half as many distinct texts as samples",
				*q.DuplicatedProblems, q.DuplicateChecked)
		}
		out = append(out, Warning{
			Code: "duplicated-samples", Severity: SeverityCritical, Models: []string{m.Name},
			Figures: []string{FigurePassK, FigureIntervals, FigureCrossover, FigureSolved},
			Text: fmt.Sprintf("%s: problem %s has %d samples but only %s%s; duplicated samples inflate pass@k confidence "+
				"and can mean the sampler reused a seed (or sampled at temperature 0).", m.Name, ex.Problem, ex.N, plural(ex.Distinct, "distinct text", "distinct texts"), others),
		})
	}
	return out
}

// plural formats "1 problem" or "3 problems".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

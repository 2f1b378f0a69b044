package analysis

import (
	"fmt"
	"strings"

	"github.com/reach-lab/reach/internal/answerclass"
)

// Figures of the debate parts a warning can name.
const (
	FigureCoT        = "CoT-pass@k"
	FigurePerplexity = "perplexity"
	FigureDiversity  = "answer diversity"
	FigureSupport    = "support"
)

func init() {
	checks = append(checks, checkCoTPartial, checkCoTUnsure, checkCoTAgreement, checkPerplexityPartial,
		checkDiversityCap, checkDiversityBudgets, checkSupportEps)
}

// checkCoTPartial: CoT-pass@k enters only problems whose answer-correct
// samples all have a verdict; it never mixes judged and unjudged samples.
// No figure and no failure, no warning: a judge saved but not started (or
// nothing judged yet) draws no CoT curve, and the Debate section says what
// is pending; failed judgments are worth a warning either way.
func checkCoTPartial(rep *Report) []Warning {
	c := rep.CoT
	if c == nil || c.Status != DebatePartial {
		return nil
	}
	pending, errs := 0, 0
	for _, m := range c.Models {
		pending += m.Pending
		errs += m.Errors
	}
	if c.Problems == 0 && errs == 0 {
		return nil
	}
	text := fmt.Sprintf("CoT-pass@k covers %d of %d problems: on %s some answer-correct samples have no reasoning verdict yet (%s",
		c.Problems, c.Problems+c.LeftOut, plural(c.LeftOut, "problem", "problems"), plural(pending, "sample", "samples"))
	if errs > 0 {
		text += fmt.Sprintf(", %d of them because the judge failed", errs)
	}
	text += "). Those problems are left out of the CoT curves and of the pass@k curves drawn beside them; judge the rest to include them."
	return []Warning{{Code: "cot-partial", Severity: SeverityWarning, Figures: []string{FigureCoT}, Text: text}}
}

// checkCoTUnsure: unsure verdicts count as flawed reasoning.
func checkCoTUnsure(rep *Report) []Warning {
	c := rep.CoT
	if c == nil || c.Problems == 0 {
		return nil
	}
	var out []Warning
	for _, m := range c.Models {
		if m.Correct == 0 || m.Unsure == 0 {
			continue
		}
		sev := SeverityInfo
		if 10*m.Unsure > m.Correct {
			sev = SeverityWarning
		}
		out = append(out, Warning{Code: "cot-unsure", Severity: sev, Figures: []string{FigureCoT}, Models: []string{m.Name},
			Text: fmt.Sprintf("The judge was unsure about %d of %s's %d answer-correct samples; CoT-pass@k counts them as not valid, so it is a lower bound by up to that many samples. Label some on the problem pages to settle them.",
				m.Unsure, m.Name, m.Correct)})
	}
	return out
}

// checkCoTAgreement: a judge that disagrees with people makes CoT-pass@k
// a figure about the judge.
func checkCoTAgreement(rep *Report) []Warning {
	c := rep.CoT
	if c == nil || c.Agreement == nil || c.Agreement.Samples < 10 {
		return nil
	}
	a := c.Agreement
	if a.Kappa != nil && *a.Kappa >= 0.6 {
		return nil
	}
	k := "undefined"
	if a.Kappa != nil {
		k = fmt.Sprintf("%.2f", *a.Kappa)
	}
	return []Warning{{Code: "cot-judge-disagrees", Severity: SeverityWarning, Figures: []string{FigureCoT},
		Text: fmt.Sprintf("The judge agrees with people's labels on %d of %d samples (Cohen's κ %s, below 0.6): the CoT-pass@k curves rest on judge verdicts people often overrule.",
			a.Agree, a.Samples, k)}}
}

// checkPerplexityPartial: quartiles of the samples scored so far.
// Nothing scored yet: no figure to read with care.
func checkPerplexityPartial(rep *Report) []Warning {
	p := rep.Perplexity
	if p == nil || p.Status != DebatePartial || !p.anyScored() {
		return nil
	}
	return []Warning{{Code: "perplexity-partial", Severity: SeverityWarning, Figures: []string{FigurePerplexity},
		Text: "Perplexity under the base model: " + p.Note + "."}}
}

// checkDiversityCap: rare answer texts were not merged by equivalence.
func checkDiversityCap(rep *Report) []Warning {
	d := rep.Diversity
	if d == nil || d.Status != DebateComplete {
		return nil
	}
	var parts []string
	for _, m := range d.Models {
		if m != nil && m.Capped > 0 {
			parts = append(parts, fmt.Sprintf("%s on %s", m.Name, plural(m.Capped, "problem", "problems")))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return []Warning{{Code: "diversity-equivalence-cap", Severity: SeverityInfo, Figures: []string{FigureDiversity},
		Text: fmt.Sprintf("Where a problem has so many distinct answers that their grouping spends its %d equivalence checks, the rarer ones are grouped by text only, not by equivalence (%s): distinct answers and entropy may be slightly high there, and the problem page groups them alike.",
			answerclass.MaxChecks, strings.Join(parts, ", "))}}
}

// checkDiversityBudgets: the plug-in entropy and the distinct-answer count
// grow with the number of samples, so models with different n are not
// comparable problem by problem.
func checkDiversityBudgets(rep *Report) []Warning {
	d := rep.Diversity
	if d == nil || d.Status != DebateComplete || rep.Budget.Equal {
		return nil
	}
	return []Warning{{Code: "diversity-unequal-budgets", Severity: SeverityWarning, Figures: []string{FigureDiversity},
		Text: fmt.Sprintf("The models have different numbers of samples per problem (n from %d to %d): distinct answers and answer entropy grow with n, so compare them across models with care.",
			rep.Budget.NMin, rep.Budget.NMax)}}
}

// checkSupportEps: with ε·n < 1 a single correct sample already clears ε.
func checkSupportEps(rep *Report) []Warning {
	s := rep.Support
	if s == nil || s.Eps <= 0 || s.Eps*float64(rep.Budget.NMin) >= 1 {
		return nil
	}
	return []Warning{{Code: "support-eps-below-resolution", Severity: SeverityInfo, Figures: []string{FigureSupport},
		Text: fmt.Sprintf("ε = %g is below 1/n for problems with n = %d samples: there one correct sample already puts a problem in the support, as with ε = 0.",
			s.Eps, rep.Budget.NMin)}}
}

package analysis

import (
	"fmt"
	"strings"
)

// Checks of what the figures rest on: how many of the dataset's problems
// they cover, how many samples per problem, and whether Reach's verifier
// agrees with the labels the files came with.

// fewProblemsShare: below this share of the dataset's problems entering the
// figures, the comparison describes a different (and unknown) subset.
const fewProblemsShare = 0.5

// checkFewProblems: problems without samples from every model are left
// out; when most of the dataset is left out the figures describe a subset
// chosen by whatever produced the files (a test run, a crashed job, a
// samples file for another split).
func checkFewProblems(rep *Report) []Warning {
	total := rep.Problems + rep.Dropped
	if rep.Dropped == 0 || total == 0 || float64(rep.Problems) >= fewProblemsShare*float64(total) {
		return nil
	}
	if rep.SampledLimit > 0 && rep.Problems <= rep.SampledLimit {
		return nil // sampled with a limit: the subset was chosen
	}
	return []Warning{{
		Code: "few-problems", Severity: SeverityWarning, Figures: []string{FigureAll},
		Text: fmt.Sprintf("Only %d of the dataset's %d problems have samples from every model; the other %d are left out, so every figure describes %.1f %% of the dataset. Unless you chose that subset (sampling with a limit, say), check that the samples files are complete and for this dataset.",
			rep.Problems, total, rep.Dropped, 100*float64(rep.Problems)/float64(total)),
	}}
}

// checkOneSample: with one sample per problem there is no curve: pass@k is
// pass@1, and no crossover can be read (Yue et al. sample n = 256).
func checkOneSample(rep *Report) []Warning {
	if rep.KMax != 1 || rep.Problems == 0 {
		return nil
	}
	text := "Every problem has one sample per model (k max = 1): pass@k is pass@1 only, so no crossover can be read, and a problem is \"solved\" on a single draw. The capability-boundary question needs many samples per problem (Yue et al. use up to 256)."
	if rep.Budget.NMax > 1 {
		// Only some models (or problems) have one: name who limits k.
		var one []string
		for _, m := range rep.Models {
			for _, x := range m.Counts.All() {
				if x.N == 1 {
					one = append(one, m.Name)
					break
				}
			}
		}
		who := "some model"
		if len(one) > 0 {
			who = strings.Join(one, ", ")
		}
		text = fmt.Sprintf("%s has one sample on some problems, so k max = 1 for the comparison (the most samples of a model on a problem: %d): pass@k is pass@1 only, so no crossover can be read, and a problem is \"solved\" on a single draw. The capability-boundary question needs many samples per problem for every model (Yue et al. use up to 256).", who, rep.Budget.NMax)
	}
	return []Warning{{
		Code: "one-sample", Severity: SeverityWarning, Figures: []string{FigurePassK, FigureCrossover, FigureSolved},
		Text: text,
	}}
}

// verdictsDifferShare: Reach's verifier and a file's labels disagreeing on
// more than this share of samples means one of them is grading something
// else (a harness, an answer format, a reference) rather than noise.
const verdictsDifferShare = 0.05

// checkVerdictsDiffer: after re-verification, the figures are Reach's
// verdicts; when they differ from the file's labels on many samples, one of
// the two graders is probably wrong, and the reader must know which
// verdicts the figures use.
func checkVerdictsDiffer(rep *Report) []Warning {
	var out []Warning
	for _, m := range rep.Models {
		if m.VerdictsChanged == nil || *m.VerdictsChanged == 0 || m.Samples == nil || *m.Samples == 0 {
			continue
		}
		share := float64(*m.VerdictsChanged) / float64(*m.Samples)
		if share <= verdictsDifferShare {
			continue
		}
		out = append(out, Warning{
			Code: "verdicts-differ-from-file", Severity: SeverityCritical, Figures: []string{FigureAll}, Models: []string{m.Name},
			Text: fmt.Sprintf("%s: Reach's verdicts differ from the file's labels on %d of %d samples (%.1f %%); the figures use Reach's. A disagreement this large usually means the two graders run different things: for code, the harness (the human-eval fork behind some released files needs strip-docstrings); for math, the answer format or the reference. Check a few problem pages, then re-verify with the right setting or restore the file's verdicts.",
				m.Name, *m.VerdictsChanged, *m.Samples, 100*share),
		})
	}
	return out
}

// checkMixedVerdicts: a file with verdicts on some lines only (its
// failures, say, or one labelled sample) has the rest graded by Reach's
// verifier, and its figures then rest on two graders that can disagree on
// what counts as correct; the page said so only in a verdicts column.
func checkMixedVerdicts(rep *Report) []Warning {
	var out []Warning
	for _, m := range rep.Models {
		if m.VerdictSource != "file+verifier" {
			continue
		}
		out = append(out, Warning{
			Code: "mixed-verdicts", Severity: SeverityWarning, Figures: []string{FigureAll}, Models: []string{m.Name},
			Text: fmt.Sprintf("%s: its file gives a verdict for some samples only; Reach's verifier graded the others, so its figures mix two graders, which can disagree on what counts as correct. "+
				"For one grader, press Re-verify (every sample graded by Reach's verifier), or import a file with a verdict on every line.", m.Name),
		})
	}
	return out
}

// checkNothingSolved: a model with no correct sample on any problem is
// almost always a samples file read against the wrong dataset (its ids
// matched another benchmark's problems by position), a reference answer in
// another form, or a code harness that runs none of its programs: its
// curve is 0 % everywhere, and a page that drew it without a word said
// "this model solves nothing".
func checkNothingSolved(rep *Report) []Warning {
	if rep.Problems == 0 {
		return nil
	}
	var out []Warning
	for _, m := range rep.Models {
		if m.Solved > 0 {
			continue
		}
		var samples int
		for _, x := range m.Counts.All() {
			samples += x.N
		}
		out = append(out, Warning{Code: "nothing-solved", Severity: SeverityCritical, Figures: []string{FigureAll}, Models: []string{m.Name},
			Text: fmt.Sprintf("%s has no correct sample on any of the %s (%s): its pass@k is 0 at every k. Check that its samples file is for this dataset (problem ids that are not the dataset's are read as positions in it), that the reference answers are in a form the verifier reads, and for code that the programs ran; the problem pages show each sample's verdict and why.",
				m.Name, plural(rep.Problems, "problem", "problems"), plural(samples, "sample", "samples")),
		})
	}
	return out
}

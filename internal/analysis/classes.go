package analysis

import (
	"slices"
	"strings"

	"github.com/reach-lab/reach/internal/answerclass"
	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
)

// partitionOf groups one problem's final answers, every run's together, by
// answerclass (the grouping the problem page shows): perRun holds each
// run's samples of the problem. A code problem's answers (its samples
// carry a Program) are grouped by text only, as the problem page groups
// them: the math equivalence means nothing there. equiv nil groups by text
// without white space.
func partitionOf(perRun [][]store.Answer, equiv func(a, b string) bool) *answerclass.Partition {
	at := map[string]int{}
	var answers []answerclass.Answer
	for r, as := range perRun {
		for _, a := range as {
			if a.Program != "" {
				equiv = nil
			}
			text := strings.Trim(a.Extracted, " ") // as store.AnswerSQL's btrim, so the page's texts are these
			i, ok := at[text]
			if !ok {
				i = len(answers)
				at[text] = i
				answers = append(answers, answerclass.Answer{Text: text, N: make([]int, len(perRun))})
			}
			answers[i].N[r]++
			if a.Correct {
				answers[i].Correct++
			}
		}
	}
	return answerclass.NewPartition(answers, len(perRun), equiv)
}

// votesIn assigns maj@k classes to one run's samples of a problem from the
// problem's partition: every sample in the correct class (graded correct,
// or an answer the verifier's equivalence groups with a correct one, as the
// problem page shows it) votes class 0 and counts as correct, a sample without an answer does not vote (passk.NoAnswer), and
// the other classes are 1, 2, … by the partition's order.
func votesIn(as []store.Answer, p *answerclass.Partition) []passk.Vote {
	out := make([]passk.Vote, len(as))
	for i, a := range as {
		c, _ := p.Of(a.Extracted, a.Correct)
		switch {
		case a.Correct || p.IsCorrect(c):
			out[i] = passk.Vote{Class: 0, Correct: true}
		case c == answerclass.NoClass:
			out[i] = passk.Vote{Class: passk.NoAnswer}
		default:
			out[i] = passk.Vote{Class: c + 1}
		}
	}
	return out
}

// classesIn returns one run's answer-diversity classes on a problem from
// the problem's partition: the sizes (the correct class first, then the
// others in the partition's order), the samples without an answer and
// whether the partition ran out of equivalence checks. Code completions,
// which have no final answer, are grouped by program text without white
// space (store.Answer.Program).
func classesIn(as []store.Answer, p *answerclass.Partition) (sizes []int, noAnswer int, capped bool) {
	correct := 0
	bySlot := map[int]int{}
	var slots []int
	programs := map[string]int{}
	var progs []string
	for _, a := range as {
		if a.Program != "" {
			if programs[a.Program] == 0 {
				progs = append(progs, a.Program)
			}
			programs[a.Program]++
			continue
		}
		c, _ := p.Of(a.Extracted, a.Correct)
		switch {
		case a.Correct || p.IsCorrect(c):
			correct++
		case c == answerclass.NoClass:
			noAnswer++
		default:
			if bySlot[c] == 0 {
				slots = append(slots, c)
			}
			bySlot[c]++
		}
	}
	if correct > 0 {
		sizes = append(sizes, correct)
	}
	for _, pr := range progs {
		sizes = append(sizes, programs[pr])
	}
	slices.Sort(slots)
	for _, c := range slots {
		sizes = append(sizes, bySlot[c])
	}
	return sizes, noAnswer, !p.Complete && len(slots) > 0
}

// votes is votesIn with the partition of as alone.
func votes(as []store.Answer, equiv func(a, b string) bool) []passk.Vote {
	return votesIn(as, partitionOf([][]store.Answer{as}, equiv))
}

// answerClasses is classesIn with the partition of as alone.
func answerClasses(as []store.Answer, equiv func(a, b string) bool) (sizes []int, noAnswer int, capped bool) {
	return classesIn(as, partitionOf([][]store.Answer{as}, equiv))
}

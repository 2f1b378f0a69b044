package web

import (
	"math"

	"github.com/reach-lab/reach/internal/store"
)

// PageAnswerClasses is the problem page's grouping of one problem's answer
// counts (every class, none summed into "other"), for the cross-check in
// TestAnswerClassesAgree: each spelling's class index, whether that class
// is the correct one, and each class's shown text.
func PageAnswerClasses(c store.Comparison, counts []store.AnswerCount, kind string) (classOf map[string]int, correct []bool, label []string) {
	groups, _, _ := groupAnswers(c.Runs, withTexts(c, counts), math.MaxInt, answerEquiv(kind))
	classOf = map[string]int{}
	for i, g := range groups {
		for _, m := range g.Members {
			classOf[m.Answer] = i
		}
		correct = append(correct, g.Correct > 0)
		label = append(label, g.Answer)
	}
	return classOf, correct, label
}

package web

import (
	"cmp"
	"slices"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// answersShown is how many answers the problem page's answer distribution
// lists (correct ones always, then the most frequent); the others are
// summed in one row.
const answersShown = 12

// answerGroups turns a problem's answer counts (store.AnswerCounts) into
// its answer distribution per model (in c.Runs order; models without
// completion texts have none) and the samples each model's grading policy
// leaves uncounted, by why (store.UncountedFallback, store.UncountedLength;
// runs with none absent).
func answerGroups(c store.Comparison, counts []store.AnswerCount) (groups []views.AnswerGroup, other *views.AnswerGroup, uncounted map[int64]map[string]int) {
	texts := map[int64]bool{}
	for _, r := range c.Runs {
		texts[r.ID] = r.HasTexts
	}
	uncounted = map[int64]map[string]int{}
	var shown []store.AnswerCount
	for _, ac := range counts {
		if !texts[ac.RunID] {
			continue
		}
		shown = append(shown, ac)
		for why, n := range map[string]int{store.UncountedFallback: ac.Fallback, store.UncountedLength: ac.Truncated} {
			if n == 0 {
				continue
			}
			if uncounted[ac.RunID] == nil {
				uncounted[ac.RunID] = map[string]int{}
			}
			uncounted[ac.RunID][why] += n
		}
	}
	groups, other = groupAnswers(c.Runs, shown, answersShown)
	return groups, other, uncounted
}

// groupAnswers turns per-run answer counts into one row per answer with a
// count per run (runs order): answers some sample of which was graded
// correct first, then by how many samples gave them, then by text. At
// most shown rows, correct answers always among them; the rest come back
// summed as other (nil when none).
func groupAnswers(runs []store.Run, counts []store.AnswerCount, shown int) ([]views.AnswerGroup, *views.AnswerGroup) {
	col := map[int64]int{}
	for i, r := range runs {
		col[r.ID] = i
	}
	at := map[string]int{}
	var groups []views.AnswerGroup
	for _, ac := range counts {
		i, ok := at[ac.Answer]
		if !ok {
			i = len(groups)
			at[ac.Answer] = i
			groups = append(groups, views.AnswerGroup{Answer: ac.Answer, N: make([]int, len(runs))})
		}
		g := &groups[i]
		g.N[col[ac.RunID]] += ac.N
		g.Total += ac.N
		g.Correct += ac.Correct
	}
	slices.SortFunc(groups, func(a, b views.AnswerGroup) int {
		if (a.Correct > 0) != (b.Correct > 0) {
			if a.Correct > 0 {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.Total, a.Total); c != 0 {
			return c
		}
		return cmp.Compare(a.Answer, b.Answer)
	})
	if len(groups) <= shown {
		return groups, nil
	}
	cut := slices.IndexFunc(groups, func(g views.AnswerGroup) bool { return g.Correct == 0 })
	if cut < 0 {
		cut = len(groups)
	}
	cut = max(cut, shown)
	if cut == len(groups) {
		return groups, nil
	}
	other := &views.AnswerGroup{N: make([]int, len(runs))}
	for _, g := range groups[cut:] {
		other.Distinct++
		other.Total += g.Total
		for i, n := range g.N {
			other.N[i] += n
		}
	}
	return groups[:cut], other
}

package web

import (
	"crypto/sha256"

	"github.com/maypok86/otter/v2"

	"github.com/reach-lab/reach/internal/answerclass"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// answersShown is how many answer classes the problem page's answer
// distribution lists (the correct one always, then the most frequent);
// the others are summed in one row.
const answersShown = 12

// answerGroups turns a problem's answer counts (store.AnswerCounts) into
// its answer distribution per model (in c.Runs order; models without
// completion texts have none), grouped into classes of answers the
// verifier counts as one (kind is the problem's: math and choice answers
// by the math verifier's equivalence, code by text), and the samples each
// model's grading policy leaves uncounted (uncountedOf).
// complete is false when the grouping ran out of equivalence checks
// (answerclass.MaxChecks): the rarer answers were grouped by text only.
func answerGroups(c store.Comparison, counts []store.AnswerCount, kind string) (groups []views.AnswerGroup, other *views.AnswerGroup, complete bool, uncounted map[int64]map[string]int) {
	shown := withTexts(c, counts)
	key := answersKey(c.Runs, shown, kind)
	g, ok := answerGroupsSeen.GetIfPresent(key)
	if !ok {
		g.groups, g.other, g.complete = groupAnswers(c.Runs, shown, answersShown, answerEquiv(kind))
		answerGroupsSeen.Set(key, g)
	}
	return g.groups, g.other, g.complete, uncountedOf(c, counts)
}

// grouped is groupAnswers' result, shared between requests: read only.
type grouped struct {
	groups   []views.AnswerGroup
	other    *views.AnswerGroup
	complete bool
}

// answerGroupsSeen remembers answer distributions by their input. Grouping
// runs the verifier on pairs of answers (up to answerclass.MaxChecks a problem), a
// quarter of a problem page's CPU, and a problem's answers change only when
// its samples are graded again, which changes the key.
var answerGroupsSeen = otter.Must(&otter.Options[[sha256.Size]byte, grouped]{MaximumSize: 20_000})

// answersKey hashes everything groupAnswers reads, lengths included, so
// that different inputs never share a key.
func answersKey(runs []store.Run, counts []store.AnswerCount, kind string) [sha256.Size]byte {
	k := newKeyHash()
	k.str(kind)
	k.num(int64(len(runs)))
	for _, r := range runs {
		k.num(r.ID)
	}
	for _, ac := range counts {
		k.num(ac.RunID)
		k.str(ac.Answer)
		k.num(int64(ac.N))
		k.num(int64(ac.Correct))
	}
	return k.sum()
}

// withTexts keeps the answer counts of the runs with completion texts.
func withTexts(c store.Comparison, counts []store.AnswerCount) []store.AnswerCount {
	texts := map[int64]bool{}
	for _, r := range c.Runs {
		texts[r.ID] = r.HasTexts
	}
	var shown []store.AnswerCount
	for _, ac := range counts {
		if texts[ac.RunID] {
			shown = append(shown, ac)
		}
	}
	return shown
}

// uncountedOf returns, per run with completion texts, the samples its
// grading policy leaves uncounted, by why (store.UncountedFallback,
// store.UncountedLength; runs with none absent).
func uncountedOf(c store.Comparison, counts []store.AnswerCount) map[int64]map[string]int {
	uncounted := map[int64]map[string]int{}
	for _, ac := range withTexts(c, counts) {
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
	return uncounted
}

// answerEquiv is the answer equivalence for a problem kind (nil: by text).
func answerEquiv(kind string) func(a, b string) bool { return answerclass.EquivFor(kind) }

// groupAnswers turns per-run answer counts into one row per answer class
// (answerclass.Group with equiv) with a count per run (runs order) and
// its spellings: the correct class first, then by how many samples gave
// it. At most shown rows, the correct one always among them; the rest come
// back summed as other (nil when none).
func groupAnswers(runs []store.Run, counts []store.AnswerCount, shown int, equiv func(a, b string) bool) ([]views.AnswerGroup, *views.AnswerGroup, bool) {
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	answers := answerclass.FromCounts(ids, counts)
	classes, complete := answerclass.Group(answers, len(runs), equiv)
	groups := make([]views.AnswerGroup, len(classes))
	for i, c := range classes {
		g := views.AnswerGroup{Answer: c.Text(), N: c.N, Total: c.Total, Correct: c.Correct}
		for _, m := range c.Members {
			g.Members = append(g.Members, views.AnswerSpelling{Answer: m.Text, N: m.N, Total: m.Total(), Correct: m.Correct})
		}
		groups[i] = g
	}
	if len(groups) <= shown {
		return groups, nil, complete
	}
	cut := shown
	if groups[0].Correct > 0 {
		cut = max(cut, 1)
	}
	other := &views.AnswerGroup{N: make([]int, len(runs))}
	for _, g := range groups[cut:] {
		other.Distinct += len(g.Members)
		other.Total += g.Total
		for i, n := range g.N {
			other.N[i] += n
		}
	}
	return groups[:cut], other, complete
}

// Package answerclass groups the distinct final answers given on one
// problem into classes of answers the verifier counts as the same ("1/2",
// "0.5" and "\frac{1}{2}"). It is the one place that decides an answer's
// class: the problem page's answer distribution (Group), and maj@k, answer
// diversity and the export's answer_class (Partition, built by Group from
// the same answers). It is pure: the caller reads the distinct answers with
// their counts (from samples or a precomputed table).
package answerclass

import (
	"cmp"
	"slices"
	"strings"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// Answer is one distinct final answer text on a problem.
type Answer struct {
	Text    string // "" for samples without an answer
	N       []int  // samples that gave it, per model (the caller's model order)
	Correct int    // of which graded correct, all models together
}

// Total is how many samples gave the answer.
func (a Answer) Total() int {
	t := 0
	for _, n := range a.N {
		t += n
	}
	return t
}

// Class is a set of answers counted as one.
type Class struct {
	// Members are the spellings, most frequent first (ties by text).
	Members []Answer
	N       []int // samples per model, summed over Members
	Total   int
	Correct int // samples graded correct: > 0 marks the correct class
}

// Text is the class's most frequent spelling.
func (c Class) Text() string { return c.Members[0].Text }

// MaxChecks bounds the equivalence checks per problem (one costs up to
// ~70 µs: both answers are parsed), so that grouping one problem stays
// under ~0.1 s whatever the samples say: about 60 distinct wrong answers
// are compared with each other in full. The page and the statistics use
// the same bound, so they group alike. Answers are taken most frequent
// first; once the checks are spent, the rarer ones join a class only when
// equal to one of its members but for white space.
const MaxChecks = 2000

// Group returns the classes of answers and whether every answer was
// compared by equiv (false: MaxChecks ran out). An answer some sample of
// which was graded correct belongs to the correct class, with every answer
// equivalent to one of those; the other answers form classes by equiv
// (each joins the first class, in order of size, whose most frequent
// spelling it is equivalent to). Answers equal but for white space are
// one class without asking equiv; equiv nil compares by that text only.
// Samples without an answer ("") stay a class of their own. Classes come
// correct first, then by samples, then by text; models is the length of
// each N.
func Group(answers []Answer, models int, equiv func(a, b string) bool) (classes []Class, complete bool) {
	as := slices.Clone(answers)
	slices.SortFunc(as, func(a, b Answer) int {
		if c := cmp.Compare(b.Total(), a.Total()); c != 0 {
			return c
		}
		return cmp.Compare(a.Text, b.Text)
	})
	var made []*Class
	byKey := map[string]*Class{} // text without white space -> class
	var correct *Class
	add := func(c *Class, a Answer) {
		c.Members = append(c.Members, a)
		for i := range min(models, len(a.N)) {
			c.N[i] += a.N[i]
		}
		c.Total += a.Total()
		c.Correct += a.Correct
	}
	newClass := func() *Class {
		c := &Class{N: make([]int, models)}
		made = append(made, c)
		return c
	}
	// Correct answers first: their class is the reference's.
	for _, a := range as {
		if a.Correct == 0 || a.Text == "" {
			continue
		}
		if correct == nil {
			correct = newClass()
		}
		add(correct, a)
		byKey[squeeze(a.Text)] = correct
	}
	checks := 0
	complete = true
	same := func(a, b string) bool {
		checks++
		return equiv(a, b)
	}
	for _, a := range as {
		if a.Correct > 0 && a.Text != "" {
			continue
		}
		key := squeeze(a.Text)
		if c, ok := byKey[key]; ok {
			add(c, a)
			continue
		}
		var into *Class
		if a.Text != "" && equiv != nil {
			for _, c := range made {
				if checks >= MaxChecks {
					complete = false
					break
				}
				if c.Members[0].Text == "" {
					continue
				}
				if c == correct {
					if slices.ContainsFunc(c.Members, func(m Answer) bool { return checks < MaxChecks && same(m.Text, a.Text) }) {
						into = c
						break
					}
				} else if same(c.Members[0].Text, a.Text) {
					into = c
					break
				}
			}
		}
		if into == nil {
			into = newClass()
		}
		add(into, a)
		byKey[key] = into
	}
	if len(made) == 0 {
		return nil, true
	}
	out := make([]Class, len(made))
	for i, c := range made {
		out[i] = *c
	}
	slices.SortStableFunc(out, func(a, b Class) int {
		if (a.Correct > 0) != (b.Correct > 0) {
			if a.Correct > 0 {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.Total, a.Total); c != 0 {
			return c
		}
		return cmp.Compare(a.Text(), b.Text())
	})
	return out, complete
}

// squeeze drops white space: "1 / 2" and "1/2" are one spelling.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
}

// MathEquiv is the math verifier's answer equivalence (as maj@k groups
// answers): b read as an answer is correct against a as the reference.
// For math and multiple-choice problems; code has no final answer.
func MathEquiv(a, b string) bool {
	return vmath.Check(a, b, vmath.Options{}).Status == verify.Correct
}

// Partition is Group's classes of one problem's answers as a lookup from a
// sample to its class, for figures computed per sample (maj@k's votes,
// answer diversity's class sizes, the export's answer_class).
type Partition struct {
	Classes  []Class        // as Group returns them
	Complete bool           // every answer was compared by equiv (Group's complete)
	index    map[string]int // text without white space -> index in Classes
	correct  int            // index of the correct class, -1 without one
}

// NoClass is Partition.Of's class for a sample without an answer.
const NoClass = -1

// NewPartition groups answers (every model's answers on one problem, as
// for Group) and indexes the classes.
func NewPartition(answers []Answer, models int, equiv func(a, b string) bool) *Partition {
	classes, complete := Group(answers, models, equiv)
	p := &Partition{Classes: classes, Complete: complete, index: map[string]int{}, correct: -1}
	for i, c := range classes {
		if c.Correct > 0 && c.Text() != "" && p.correct < 0 {
			p.correct = i
		}
		for _, m := range c.Members {
			p.index[squeeze(m.Text)] = i
		}
	}
	return p
}

// Of returns the class of one sample: the correct class for a sample
// graded correct (whatever its text: the file or a reviewer may have said
// so), NoClass for one without an answer, else its answer's class. ok is
// false for a text the partition was not built from.
func (p *Partition) Of(text string, correct bool) (class int, ok bool) {
	if correct && p.correct >= 0 {
		return p.correct, true
	}
	key := squeeze(text)
	if key == "" {
		return NoClass, true
	}
	i, ok := p.index[key]
	if !ok {
		return NoClass, false
	}
	return i, true
}

// IsCorrect says whether class i is the correct class (it holds an answer
// some sample of which was graded correct).
func (p *Partition) IsCorrect(i int) bool { return i >= 0 && i == p.correct }

// Label is class i's most frequent spelling ("" for NoClass).
func (p *Partition) Label(i int) string {
	if i < 0 || i >= len(p.Classes) {
		return ""
	}
	return p.Classes[i].Text()
}

// EquivFor is the answer equivalence for a problem kind (store.Problem's
// Kind): the math verifier's for math and multiple choice, nil (by text)
// for code, whose answer is its program, judged by running it.
func EquivFor(kind string) func(a, b string) bool {
	if kind == "code" {
		return nil
	}
	return MathEquiv
}

// FromCounts turns one problem's answer counts (store.AnswerCounts, the
// runs' rows of run_answers) into Group's answers, N in the order of runs
// (run ids; counts of other runs are left out).
func FromCounts(runs []int64, counts []store.AnswerCount) []Answer {
	col := map[int64]int{}
	for i, id := range runs {
		col[id] = i
	}
	at := map[string]int{}
	var answers []Answer
	for _, ac := range counts {
		r, ok := col[ac.RunID]
		if !ok {
			continue
		}
		i, ok := at[ac.Answer]
		if !ok {
			i = len(answers)
			at[ac.Answer] = i
			answers = append(answers, Answer{Text: ac.Answer, N: make([]int, len(runs))})
		}
		answers[i].N[r] += ac.N
		answers[i].Correct += ac.Correct
	}
	return answers
}

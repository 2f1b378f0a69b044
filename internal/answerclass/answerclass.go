// Package answerclass groups the distinct final answers given on one
// problem into classes of answers the verifier counts as the same ("1/2",
// "0.5" and "\frac{1}{2}"), for the problem page's answer distribution. It
// is pure: the caller reads the distinct answers with their counts (from
// samples or a precomputed table) and renders the classes.
package answerclass

import (
	"cmp"
	"slices"
	"strings"

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
// ~70 µs: both answers are parsed), so that grouping stays a few
// milliseconds whatever the samples say. Answers are taken most frequent
// first; once the checks are spent, the rarer ones join a class only when
// equal to one of its members but for white space.
const MaxChecks = 100

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

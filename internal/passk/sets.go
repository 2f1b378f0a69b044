package passk

import (
	"cmp"
	"fmt"
	"slices"
)

// SolvedSets splits problems by which of two models solved them at the sampling budget; a
// problem is solved when C >= 1. The four counts sum to the number of problems; the index
// slices (ascending problem indices, never nil) hold the problems of each region.
type SolvedSets struct {
	Both, BaseOnly, OtherOnly, Neither int

	BothProblems, BaseOnlyProblems, OtherOnlyProblems, NeitherProblems []int
}

// Solved compares two models' counts problem by problem (base[i] and other[i] are the same
// problem). Errors for different lengths or invalid counts.
func Solved(base, other []Count) (SolvedSets, error) {
	if len(base) != len(other) {
		return SolvedSets{}, fmt.Errorf("solved sets: %w: %d base vs %d other problems", ErrInput, len(base), len(other))
	}
	s := SolvedSets{BothProblems: []int{}, BaseOnlyProblems: []int{}, OtherOnlyProblems: []int{}, NeitherProblems: []int{}}
	for i := range base {
		if err := base[i].validate(); err != nil {
			return SolvedSets{}, fmt.Errorf("solved sets: base problem %d: %w", i, err)
		}
		if err := other[i].validate(); err != nil {
			return SolvedSets{}, fmt.Errorf("solved sets: other problem %d: %w", i, err)
		}
		b, o := base[i].C >= 1, other[i].C >= 1
		switch {
		case b && o:
			s.BothProblems = append(s.BothProblems, i)
		case b:
			s.BaseOnlyProblems = append(s.BaseOnlyProblems, i)
		case o:
			s.OtherOnlyProblems = append(s.OtherOnlyProblems, i)
		default:
			s.NeitherProblems = append(s.NeitherProblems, i)
		}
	}
	s.Both, s.BaseOnly = len(s.BothProblems), len(s.BaseOnlyProblems)
	s.OtherOnly, s.Neither = len(s.OtherOnlyProblems), len(s.NeitherProblems)
	return s, nil
}

// Intersection is one bar of an UpSet chart: the problems solved (C >= 1) by exactly the models
// in Members and by no other model (an exclusive intersection).
type Intersection struct {
	Members  []int // model indices, ascending; empty for the problems no model solved
	Problems []int // problem indices, ascending
}

// Intersections returns the non-empty exclusive intersections of the models' solved sets, for
// UpSet charts (any number of models, 1 to 64). models[m][i] is model m's count on problem i;
// every model must cover the same problems. The group of problems nobody solved is included
// with empty Members. Order: most problems first, then fewer members first, then members
// lexicographically. Errors for no models, ragged lengths, invalid counts or more than 64 models.
func Intersections(models [][]Count) ([]Intersection, error) {
	if len(models) == 0 || len(models) > 64 {
		return nil, fmt.Errorf("intersections: %w: %d models, need 1..64", ErrInput, len(models))
	}
	nprob := len(models[0])
	groups := map[uint64][]int{}
	for i := range nprob {
		var mask uint64
		for m, counts := range models {
			if len(counts) != nprob {
				return nil, fmt.Errorf("intersections: %w: model %d has %d problems, model 0 has %d", ErrInput, m, len(counts), nprob)
			}
			if err := counts[i].validate(); err != nil {
				return nil, fmt.Errorf("intersections: model %d problem %d: %w", m, i, err)
			}
			if counts[i].C >= 1 {
				mask |= 1 << m
			}
		}
		groups[mask] = append(groups[mask], i)
	}
	out := make([]Intersection, 0, len(groups))
	for mask, probs := range groups {
		members := []int{}
		for m := range models {
			if mask&(1<<m) != 0 {
				members = append(members, m)
			}
		}
		out = append(out, Intersection{Members: members, Problems: probs})
	}
	slices.SortFunc(out, func(a, b Intersection) int {
		return cmp.Or(
			cmp.Compare(len(b.Problems), len(a.Problems)),
			cmp.Compare(len(a.Members), len(b.Members)),
			slices.Compare(a.Members, b.Members),
		)
	})
	return out, nil
}

// SolvedExpected holds the expected solved-set sizes of two models at equal
// budgets (fractional counts; they sum to the number of problems).
type SolvedExpected struct {
	Both, BaseOnly, OtherOnly, Neither float64
}

// SolvedAtEqualBudget returns the expected solved sets when, on each problem,
// both models get the same budget m = min(base.N, other.N): a model with
// n > m solves the problem within m of its samples with probability
// pass@m(n, c) (the unbiased estimator: the chance that m samples drawn
// without replacement from its n include a correct one), a model with n = m
// with probability 1 if c >= 1, else 0. The models are sampled
// independently, so P(both) = P(base)·P(other). With equal n everywhere the
// result is Solved's counts exactly. Errors for different lengths or invalid
// counts.
func SolvedAtEqualBudget(base, other []Count) (SolvedExpected, error) {
	if len(base) != len(other) {
		return SolvedExpected{}, fmt.Errorf("equal-budget solved sets: %w: %d base vs %d other problems", ErrInput, len(base), len(other))
	}
	var s SolvedExpected
	for i := range base {
		m := min(base[i].N, other[i].N)
		pb, err := PassAtK(base[i].N, base[i].C, m)
		if err != nil {
			return SolvedExpected{}, fmt.Errorf("equal-budget solved sets: base problem %d: %w", i, err)
		}
		po, err := PassAtK(other[i].N, other[i].C, m)
		if err != nil {
			return SolvedExpected{}, fmt.Errorf("equal-budget solved sets: other problem %d: %w", i, err)
		}
		s.Both += pb * po
		s.BaseOnly += pb * (1 - po)
		s.OtherOnly += (1 - pb) * po
		s.Neither += (1 - pb) * (1 - po)
	}
	return s, nil
}

package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
)

// intersections turns passk.Intersections into named, id-listing bars.
func intersections(ms []ModelReport, models [][]passk.Count, kept []store.Problem) ([]Intersection, error) {
	if len(models) > 64 {
		return []Intersection{}, nil // UpSet is not drawn beyond 64 models
	}
	xs, err := passk.Intersections(models)
	if err != nil {
		return nil, err
	}
	out := make([]Intersection, len(xs))
	for i, x := range xs {
		names := make([]string, len(x.Members))
		for j, m := range x.Members {
			names[j] = ms[m].Name
		}
		out[i] = Intersection{Members: names, Index: x.Members, Count: len(x.Problems), Problems: keys(kept, x.Problems)}
	}
	return out, nil
}

// GroupKs are the ks of the breakdowns' curves: powers of two below kmax, and kmax.
func GroupKs(kmax int) []int {
	var ks []int
	for k := 1; k < kmax; k *= 2 {
		ks = append(ks, k)
	}
	return append(ks, kmax)
}

// breakdowns computes the per-subject and per-level groups (each group
// with at least one problem; levels in numeric order when they are numbers).
func breakdowns(rep *Report, models [][]passk.Count, kept []store.Problem) ([]Breakdown, error) {
	out := []Breakdown{}
	// The curves are kept at GroupKs, but the crossover is found on every k,
	// as the headline's is: on powers of two a group of every problem said
	// "meet at k = 8" next to a headline of k = 7.
	ks, all := GroupKs(rep.KSampled), passk.AllKs(rep.KSampled)
	for _, by := range []string{"subject", "level"} {
		groups := map[string][]int{}
		for j, p := range kept {
			g := p.Subject
			if by == "level" {
				g = p.Level
			}
			if g != "" {
				groups[g] = append(groups[g], j)
			}
		}
		names := make([]string, 0, len(groups))
		for g := range groups {
			names = append(names, g)
		}
		slices.SortFunc(names, compareLabels)
		for _, g := range names {
			idx := groups[g]
			b := Breakdown{By: by, Group: g, Problems: len(idx)}
			sub := make([][]passk.Count, len(models))
			full := make([][]float64, len(models))
			for m, cs := range models {
				sub[m] = make([]passk.Count, len(idx))
				for i, j := range idx {
					sub[m][i] = cs[j]
				}
				curve, err := passk.Curve(sub[m], all)
				if err != nil {
					return nil, fmt.Errorf("%s %q: %w", by, g, err)
				}
				full[m] = curve
				gm := GroupModel{Name: rep.Models[m].Name}
				for _, k := range ks {
					gm.PassAtK = append(gm.PassAtK, Point{K: k, Value: curve[k-1]})
				}
				for _, x := range sub[m] {
					if x.C >= 1 {
						gm.Solved++
					}
				}
				b.Models = append(b.Models, gm)
			}
			sets, err := passk.Solved(sub[0], sub[1])
			if err != nil {
				return nil, err
			}
			b.Solved = Solved{Both: sets.Both, BaseOnly: sets.BaseOnly, OtherOnly: sets.OtherOnly, Neither: sets.Neither}
			if b.Crossover, err = crossoverOf(all, full[0], full[1], rep.KSampled, RoleNoun(rep.Models[1].Role)); err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// compareLabels orders numbers numerically ("Level 2" < "Level 10" too) and
// other labels alphabetically.
func compareLabels(a, b string) int {
	an, aok := trailingInt(a)
	bn, bok := trailingInt(b)
	if aok && bok && a[:len(a)-len(strconv.Itoa(an))] == b[:len(b)-len(strconv.Itoa(bn))] {
		return cmp.Compare(an, bn)
	}
	return cmp.Compare(a, b)
}

func trailingInt(s string) (int, bool) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || len(s)-i > 9 || (len(s)-i > 1 && s[i] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(s[i:])
	return n, err == nil
}

// trajectory lists, with pass@1 and pass@kmax, the models of a checkpoint series by training step: the
// base model at step 0 (or its own step) and every other model with a step.
// Empty when no other model has a step; a step given twice keeps the first.
func trajectory(runs []store.Run, ms []ModelReport, kmax int) []TrajectoryPoint {
	out := []TrajectoryPoint{}
	withStep := 0
	for i, r := range runs {
		if i > 0 && r.Step != nil {
			withStep++
		}
	}
	if withStep == 0 {
		return out
	}
	seen := map[int]bool{}
	for i, r := range runs {
		step := 0
		switch {
		case r.Step != nil:
			step = *r.Step
		case i > 0:
			continue
		}
		if seen[step] {
			continue
		}
		seen[step] = true
		tp := TrajectoryPoint{Model: ms[i].Name, Step: step, Pass1: ms[i].Pass1, PassN: ms[i].PassAtK[kmax-1].Value, model: i}
		for _, k := range GroupKs(kmax) {
			tp.AtK = append(tp.AtK, TrajectoryK{K: k, Value: ms[i].PassAtK[k-1].Value})
		}
		out = append(out, tp)
	}
	slices.SortStableFunc(out, func(a, b TrajectoryPoint) int { return cmp.Compare(a.Step, b.Step) })
	return out
}

// ChartKs are the ks a pass@k chart draws for curves up to kmax: every k
// up to 64, then 8 per doubling (k = 64·2^(j/8), rounded), and kmax. On a
// log₂ axis that is as smooth as every k, at a small fraction of the
// points (96 instead of 1,024); downloads keep every k.
func ChartKs(kmax int) []int {
	var ks []int
	for k := 1; k <= min(kmax, 64); k++ {
		ks = append(ks, k)
	}
	for j := 1; ; j++ {
		k := int(math.Round(64 * math.Exp2(float64(j)/8)))
		if k >= kmax {
			break
		}
		if k > ks[len(ks)-1] {
			ks = append(ks, k)
		}
	}
	if ks[len(ks)-1] != kmax {
		ks = append(ks, kmax)
	}
	return ks
}

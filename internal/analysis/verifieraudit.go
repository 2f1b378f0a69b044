package analysis

import (
	"context"
	"fmt"
	"slices"

	"github.com/reach-lab/reach/internal/audit"
	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
)

// AuditScope is what the verifier audit (issue 25, item 2) chooses from:
// the problems in the default report (every model has counts), the ones
// base-only or RL-only in some pair, and every model's counts on them.
type AuditScope struct {
	Comparison store.Comparison
	Kept       []int64         // problem ids in dataset order
	Deciding   []int64         // of these, base-only or RL-only in at least one pair
	Models     [][]passk.Count // Models[m][j]: run m's count on Kept[j]
	index      map[int64]int   // problem id -> position in Kept
}

// LoadAuditScope reads a ready comparison's counts and finds the problems
// whose solved-set region (passk.Solved of the base model against each
// other model) is base-only or other-only.
func LoadAuditScope(ctx context.Context, st *store.Store, id int64) (AuditScope, error) {
	c, problems, counts, err := Load(ctx, st, id)
	if err != nil {
		return AuditScope{Comparison: c}, err
	}
	sc := AuditScope{Comparison: c, index: map[int64]int{}}
	byRun := countsByRun(c, counts)
	sc.Models = make([][]passk.Count, len(c.Runs))
	for _, p := range problems {
		if !inEvery(byRun, p.ID) {
			continue
		}
		sc.index[p.ID] = len(sc.Kept)
		sc.Kept = append(sc.Kept, p.ID)
		for i := range c.Runs {
			x := byRun[i][p.ID]
			sc.Models[i] = append(sc.Models[i], passk.Count{N: x.N, C: x.C})
		}
	}
	if len(sc.Kept) == 0 {
		return sc, fmt.Errorf("%w: no problem has samples from every model", ErrNoData)
	}
	deciding := make([]bool, len(sc.Kept))
	for o := 1; o < len(c.Runs); o++ {
		sets, err := passk.Solved(sc.Models[0], sc.Models[o])
		if err != nil {
			return sc, err
		}
		for _, j := range slices.Concat(sets.BaseOnlyProblems, sets.OtherOnlyProblems) {
			deciding[j] = true
		}
	}
	sc.Deciding = []int64{}
	for j, d := range deciding {
		if d {
			sc.Deciding = append(sc.Deciding, sc.Kept[j])
		}
	}
	return sc, nil
}

// AuditPlan is what an audit with a random stratum of M samples costs.
type AuditPlan struct {
	M                int
	DecidingProblems int   // problems base-only or RL-only in some pair
	Deciding         int64 // samples graded incorrect or unparseable on them
	Rest             int64 // the other graded samples with a text
	Requests         int64 // one judge request per sample: Deciding + min(M, Rest)
}

// PlanAudit counts the samples an audit of m random samples would send the
// judge (audit.Requests).
func PlanAudit(ctx context.Context, st *store.Store, sc AuditScope, m int) (AuditPlan, error) {
	d, rest, err := st.AuditScope(ctx, sc.Comparison.ID, sc.Kept, sc.Deciding)
	if err != nil {
		return AuditPlan{}, err
	}
	return AuditPlan{M: m, DecidingProblems: len(sc.Deciding), Deciding: d, Rest: rest, Requests: audit.Requests(d, rest, m)}, nil
}

// AuditModel sums up one model's audited samples.
type AuditModel struct {
	RunID int64
	Name  string
	// Items audited; Answered with a verdict; Definite of them correct or
	// incorrect (the rate's trials); Unsure; Errors (the request failed).
	Items, Answered, Definite, Unsure, Errors int
	Disagreements                             int
	// Rate: disagreements among Definite, with its 95% Wilson interval;
	// Random the same over the random stratum only (an estimate for all
	// the model's graded samples; the deciding stratum is chosen where
	// grading errors matter, so Rate is not one).
	Rate, Random audit.Interval
}

// AuditFlip is one pair's k* and solved sets with the open disagreements
// flipped (audit.Flip).
type AuditFlip struct {
	Other string // the other model's name
	Only  string // its solved set's name: "RL-only", else "<name>-only"
	audit.Pair
}

// Label words the flip: "k* none [none ≤ 4, none ≤ 4] → 2.0 [1.2, none ≤
// 4], base-only 0 → 1, RL-only 1 → 0", or "no change". Each k* carries its
// 95% bootstrap interval ("none ≤ K": some draws had no crossover up to k
// max), so a reader sees whether the flip moves k* past its sampling error.
func (f AuditFlip) Label() string {
	if !f.Changed() {
		return "no change"
	}
	kmax := f.KMax
	end := func(b passk.CrossoverBound) string {
		if !b.Found {
			return fmt.Sprintf("none ≤ %d", kmax)
		}
		return fmt.Sprintf("%.1f", b.K)
	}
	ks := func(found bool, k float64, b passk.CrossoverBand) string {
		v := "none"
		if found {
			v = fmt.Sprintf("%.1f", k)
		}
		return fmt.Sprintf("%s [%s, %s]", v, end(b.Lo), end(b.Hi))
	}
	return fmt.Sprintf("k* %s → %s, base-only %d → %d, %s %d → %d", ks(f.FoundBefore, f.KBefore, f.BandBefore), ks(f.FoundAfter, f.KAfter, f.BandAfter),
		f.BaseOnlyBefore, f.BaseOnlyAfter, f.Only, f.OtherOnlyBefore, f.OtherOnlyAfter)
}

// AuditSummary is the audit page's figures.
type AuditSummary struct {
	Models []AuditModel
	Flips  []AuditFlip
	// Disagreements lists the items where the judge's verdict contradicts
	// Reach's, with their completions.
	Disagreements []store.AuditItem
	// Open counts the disagreements nobody kept Reach's verdict on: those
	// the flip applies (accepted ones are already in the counts).
	Open int
}

// SummariseAudit computes the audit's figures from its items and the
// current counts: per model the disagreement rate with its Wilson
// interval, and per pair k* and the solved sets with every disagreement
// not resolved as "keep Reach's" flipped (audit.Delta on the sample's
// current standing: an accepted judge verdict is already counted and adds
// nothing).
func SummariseAudit(sc AuditScope, items []store.AuditItem) (AuditSummary, error) {
	c := sc.Comparison
	s := AuditSummary{Models: make([]AuditModel, len(c.Runs)), Disagreements: []store.AuditItem{}}
	runIdx := map[int64]int{}
	for i, r := range c.Runs {
		runIdx[r.ID] = i
		s.Models[i] = AuditModel{RunID: r.ID, Name: r.ModelName}
	}
	delta := make([][]int, len(c.Runs))
	for i := range delta {
		delta[i] = make([]int, len(sc.Kept))
	}
	randomK, randomN := make([]int, len(c.Runs)), make([]int, len(c.Runs))
	for _, it := range items {
		i, ok := runIdx[it.RunID]
		if !ok {
			continue
		}
		m := &s.Models[i]
		m.Items++
		switch {
		case it.Verdict == "" && it.Error != "":
			m.Errors++
			continue
		case it.Verdict == "":
			continue
		}
		m.Answered++
		if it.Verdict == audit.Unsure {
			m.Unsure++
			continue
		}
		m.Definite++
		dis := audit.Disagrees(it.ReachStatus, it.Verdict)
		if it.Stratum == audit.StratumRandom {
			randomN[i]++
			if dis {
				randomK[i]++
			}
		}
		if !dis {
			continue
		}
		m.Disagreements++
		s.Disagreements = append(s.Disagreements, it)
		if it.Resolution == store.ResolveReach {
			continue
		}
		s.Open++
		if j, ok := sc.index[it.ProblemID]; ok {
			delta[i][j] += audit.Delta(it.Counted, it.Verdict)
		}
	}
	for i := range s.Models {
		s.Models[i].Rate = audit.Wilson(s.Models[i].Disagreements, s.Models[i].Definite)
		s.Models[i].Random = audit.Wilson(randomK[i], randomN[i])
	}
	pairs, err := audit.Flip(sc.Models, delta)
	if err != nil {
		return s, err
	}
	for _, p := range pairs {
		r := c.Runs[p.Other]
		only := r.ModelName + "-only"
		if r.Role == "rl" {
			only = "RL-only"
		}
		s.Flips = append(s.Flips, AuditFlip{Other: r.ModelName, Only: only, Pair: p})
	}
	return s, nil
}

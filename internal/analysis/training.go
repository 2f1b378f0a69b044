package analysis

import (
	"fmt"

	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/training"
)

// taxDraws and taxSeed fix the sharpening-tax difference's bootstrap, so a
// report is the same each time it is computed.
const (
	taxDraws = 1000
	taxSeed  = 20260101
)

// trainingFigures fills what follows a training run: each model's
// sharpening tax and each pair's difference at KMax, and the flows of
// problems between the trajectory's points. models[m] are model m's counts
// on the kept problems.
func (rep *Report) trainingFigures(models [][]passk.Count, kept []store.Problem) error {
	if rep.KSampled >= 2 {
		for m := range rep.Models {
			t, err := training.SharpeningTax(models[m], rep.KSampled)
			if err != nil {
				return fmt.Errorf("sharpening tax of %q: %w", rep.Models[m].Name, err)
			}
			rep.Models[m].Tax = &t
		}
		for i := range rep.Pairs {
			d, err := training.SharpeningTaxDiff(models[0], models[i+1], rep.KSampled, taxDraws, taxSeed)
			if err != nil {
				return fmt.Errorf("sharpening tax of %q vs %q: %w", rep.Pairs[i].Base, rep.Pairs[i].Other, err)
			}
			rep.Pairs[i].TaxDiff = &d
		}
	}
	if len(rep.Trajectory) == 0 {
		return nil
	}
	solved := func(m int) []bool {
		out := make([]bool, len(models[m]))
		for j, x := range models[m] {
			out[j] = x.C > 0
		}
		return out
	}
	series := make([][]bool, len(rep.Trajectory))
	for i, tp := range rep.Trajectory {
		series[i] = solved(tp.model)
	}
	flows, err := training.Flows(solved(0), series)
	if err != nil {
		return err
	}
	keysOf := func(idx []int) []string { return keys(kept, idx) }
	for i, f := range flows {
		tp := &rep.Trajectory[i]
		tp.Gained, tp.Lost, tp.Regained = keysOf(f.Gained), keysOf(f.Lost), keysOf(f.Regained)
		tp.GainedVsBase, tp.LostVsBase = keysOf(f.GainedVsBase), keysOf(f.LostVsBase)
		prev := 0
		if i > 0 {
			prev = rep.Trajectory[i-1].model
		}
		for j := range kept {
			if models[tp.model][j].N != models[prev][j].N || models[tp.model][j].N != models[0][j].N {
				tp.UnequalBudget = true
				break
			}
		}
	}
	rep.readDynamics()
	return nil
}

// readDynamics sets Dynamics from the trajectory's pass@KMax and, once the
// statistics are attached, its bands.
func (rep *Report) readDynamics() {
	if len(rep.Trajectory) < 2 {
		rep.Dynamics = nil
		return
	}
	var steps []int
	var vals, lo, hi []float64
	bands := true
	for _, tp := range rep.Trajectory {
		steps, vals = append(steps, tp.Step), append(vals, tp.PassN)
		if tp.PassNCI == nil {
			bands = false
			continue
		}
		lo, hi = append(lo, tp.PassNCI.Lo), append(hi, tp.PassNCI.Hi)
	}
	if !bands {
		lo, hi = nil, nil
	}
	d, err := training.TwoStage(rep.KMax, steps, vals, lo, hi)
	if err != nil {
		rep.Dynamics = nil
		return
	}
	rep.Dynamics = &d
	rep.DynamicsAtK = nil
	for j, k := range GroupKs(rep.KMax) {
		var vals, lo, hi []float64
		bands := true
		for _, tp := range rep.Trajectory {
			if j >= len(tp.AtK) || tp.AtK[j].K != k {
				return // a report stored before AtK: nothing to read
			}
			vals = append(vals, tp.AtK[j].Value)
			if ci := tp.AtK[j].CI; ci != nil {
				lo, hi = append(lo, ci.Lo), append(hi, ci.Hi)
			} else {
				bands = false
			}
		}
		if !bands {
			lo, hi = nil, nil
		}
		if d, err := training.TwoStage(k, steps, vals, lo, hi); err == nil {
			rep.DynamicsAtK = append(rep.DynamicsAtK, d)
		}
	}
}

package training

import "fmt"

// Flow is what changed at one checkpoint of a series. Problems are given
// by their index in the solved vectors.
type Flow struct {
	// Gained: solved here, not at the previous point of the series.
	// Lost: solved at the previous point, not here.
	// Regained: among Gained, the problems solved at some point before the
	// previous one (lost earlier, solved again).
	Gained, Lost, Regained []int
	// GainedVsBase: solved here, not by the base model; LostVsBase: solved
	// by the base model, not here.
	GainedVsBase, LostVsBase []int
}

// Flows compares each point of a training series with the one before it
// and with the base model. series[0] is the start of the series (the base
// model, or the first checkpoint when the base model is not part of it);
// base is the base model's solved vector. Every vector holds one bool per
// problem (solved: at least one correct sample), the same problems in the
// same order. out[0] has no previous point: only its VsBase lists are set.
// Errors: no series, or vectors of different lengths.
func Flows(base []bool, series [][]bool) ([]Flow, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("flows: no checkpoints")
	}
	for i, s := range series {
		if len(s) != len(base) {
			return nil, fmt.Errorf("flows: checkpoint %d has %d problems, the base model %d", i, len(s), len(base))
		}
	}
	out := make([]Flow, len(series))
	everSolved := make([]bool, len(base)) // at some point before the previous one
	for i, s := range series {
		f := Flow{Gained: []int{}, Lost: []int{}, Regained: []int{}, GainedVsBase: []int{}, LostVsBase: []int{}}
		for p, solved := range s {
			switch {
			case solved && !base[p]:
				f.GainedVsBase = append(f.GainedVsBase, p)
			case !solved && base[p]:
				f.LostVsBase = append(f.LostVsBase, p)
			}
			if i == 0 {
				continue
			}
			prev := series[i-1][p]
			switch {
			case solved && !prev:
				f.Gained = append(f.Gained, p)
				if everSolved[p] {
					f.Regained = append(f.Regained, p)
				}
			case !solved && prev:
				f.Lost = append(f.Lost, p)
			}
		}
		if i > 0 {
			for p, solved := range series[i-1] {
				everSolved[p] = everSolved[p] || solved
			}
		}
		out[i] = f
	}
	return out, nil
}

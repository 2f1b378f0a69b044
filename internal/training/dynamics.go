package training

import "fmt"

// Dynamics is the two-stage reading of a training run's boundary (Yue et
// al. 2025b, "Two-Stage Dynamic View"): pass@k at a large k first falls
// while RL exploits (the boundary shrinks) and may later rise (it expands).
// It is claimed only where 95 % bands do not overlap.
type Dynamics struct {
	// Label is one of:
	//   - "shrinks-then-expands": the lowest point's band lies below the
	//     start's and below a later point's;
	//   - "still-shrinking": below the start, and no later point is above it;
	//   - "no-shrinkage": no point's band lies below the start's;
	//   - "pending": the bands are not computed yet (no claim is made).
	Label string `json:"label"`
	// Text says it in words, with the steps.
	Text string `json:"text"`
	// Lowest is the step of the lowest point; TurnFrom and TurnTo bound
	// where the turn may be: the steps whose bands overlap the lowest one's
	// (set with a shrinkage).
	Lowest   int `json:"lowest_step"`
	TurnFrom int `json:"turn_from_step"`
	TurnTo   int `json:"turn_to_step"`
	K        int `json:"k"`
}

// TwoStage reads the dynamics from pass@K (values, fractions) at each point
// of a series, steps ascending, the first point the start (the base model),
// with 95 % bands lo and hi (nil: not computed yet, Label "pending").
// Errors: fewer than two points, or lengths that differ.
func TwoStage(K int, steps []int, values, lo, hi []float64) (Dynamics, error) {
	if len(steps) < 2 || len(values) != len(steps) {
		return Dynamics{}, fmt.Errorf("two-stage dynamics: %d steps, %d values; want two or more of each", len(steps), len(values))
	}
	d := Dynamics{K: K}
	m := 0
	for i, v := range values {
		if v < values[m] {
			m = i
		}
	}
	d.Lowest = steps[m]
	if lo == nil || hi == nil {
		d.Label, d.Text = "pending", fmt.Sprintf("Whether the boundary shrank waits for the bootstrap bands (lowest pass@%d so far at step %d).", K, d.Lowest)
		return d, nil
	}
	if len(lo) != len(steps) || len(hi) != len(steps) {
		return Dynamics{}, fmt.Errorf("two-stage dynamics: bands of %d and %d points for %d steps", len(lo), len(hi), len(steps))
	}
	if m == 0 || !(hi[m] < lo[0]) {
		d.Label = "no-shrinkage"
		d.Text = fmt.Sprintf("No shrinkage shown: at every checkpoint pass@%d's 95%% band overlaps the start's or lies above it.", K)
		return d, nil
	}
	// Where the turn may be: the points whose bands overlap the lowest one's.
	d.TurnFrom, d.TurnTo = steps[m], steps[m]
	for i := range steps {
		if i > 0 && lo[i] <= hi[m] && hi[i] >= lo[m] {
			d.TurnFrom, d.TurnTo = min(d.TurnFrom, steps[i]), max(d.TurnTo, steps[i])
		}
	}
	expands := -1
	for j := m + 1; j < len(steps); j++ {
		if lo[j] > hi[m] {
			expands = j
			break
		}
	}
	drop := 100 * (values[0] - values[m])
	if expands < 0 {
		d.Label = "still-shrinking"
		d.Text = fmt.Sprintf("Still shrinking at the last step: pass@%d fell %.1f points from the start to step %d (bands apart), and no later checkpoint is above that band.",
			K, drop, d.Lowest)
		return d, nil
	}
	d.Label = "shrinks-then-expands"
	d.Text = fmt.Sprintf("Shrinks, then expands: pass@%d fell %.1f points from the start to its lowest at step %d (the turn lies between steps %d and %d, whose bands overlap the lowest), then rose %.1f points by step %d (bands apart).",
		K, drop, d.Lowest, d.TurnFrom, d.TurnTo, 100*(values[expands]-values[m]), steps[expands])
	return d, nil
}

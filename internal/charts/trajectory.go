package charts

import (
	"errors"
	"fmt"
)

// TrajectoryLine is one metric over a checkpoint series, e.g. "pass@1" or "pass@256".
type TrajectoryLine struct {
	Name string
	// Values are fractions in [0, 1], one per step of TrajectoryInput.Steps.
	Values []float64
	// Lo and Hi are an optional 95% band: both empty, or both len(Steps).
	Lo, Hi []float64
	// Hidden draws the line off at first: its legend entry shows it (pass@k at ks between 1 and
	// k max, for reading the trajectory at a chosen k).
	Hidden bool
}

// TrajectoryInput is one RL run's checkpoints: how pass@1 and pass@k_max move with training.
type TrajectoryInput struct {
	Title string
	// Steps are the training steps of the checkpoints, strictly increasing, >= 0 (0 = the base
	// model, if the caller includes it).
	Steps []int
	// Lines are usually two: pass@1 and pass@k_max (Yue et al. 2025, Fig. 7: pass@1 rises with
	// training while pass@256 falls).
	Lines []TrajectoryLine
	Options
}

// Trajectory draws each line in percent (y) against the training step (x, linear), with
// optional bands. Errors: empty id prefix, no steps or lines, steps negative or not
// increasing, a line whose lengths differ from Steps, values outside [0, 1], lo > hi.
func Trajectory(id string, in TrajectoryInput) (Snippet, error) {
	fullID, err := chartID("trajectory", id)
	if err != nil {
		return Snippet{}, err
	}
	if len(in.Lines) == 0 {
		return Snippet{}, errors.New("trajectory chart: no lines")
	}
	if len(in.Steps) > 0 && in.Steps[0] < 0 {
		return Snippet{}, fmt.Errorf("trajectory chart: step %d is negative", in.Steps[0])
	}
	xs := intsToFloats(in.Steps)
	var cs []curve
	for _, l := range in.Lines {
		cv, err := checkCurve(l.Name, xs, l.Values, l.Lo, l.Hi, 0, 1, 100)
		if err != nil {
			return Snippet{}, fmt.Errorf("trajectory chart: %w", err)
		}
		cv.hidden = l.Hidden
		cs = append(cs, cv)
	}
	return buildCurves(fullID, curveSpec{
		kind: "trajectory", title: in.Title, opts: in.Options,
		xName: "training step", xMin: xs[0], xMax: xs[len(xs)-1],
		yName: "accuracy (%)", yMin: percentFloor(cs), yMax: 100,
		unit: "%", tipHeader: "step ", curves: cs,
	})
}

// CoverSeries is one model's Cover@τ curve.
type CoverSeries struct {
	Name string
	// Taus are thresholds in [0, 1], strictly increasing.
	Taus []float64
	// Values are Cover@τ as fractions in [0, 1]: the share of problems whose per-problem
	// accuracy c/n is at least τ.
	Values []float64
}

// CoverInput is the data of the Cover@τ chart.
type CoverInput struct {
	Title  string
	Series []CoverSeries
	Options
}

// Cover draws Cover@τ in percent (y, 0–100) against τ (x, 0–1), one line per model.
// Errors: empty id prefix or series list, lengths that differ, τ outside [0, 1] or not
// increasing, values outside [0, 1].
func Cover(id string, in CoverInput) (Snippet, error) {
	fullID, err := chartID("cover", id)
	if err != nil {
		return Snippet{}, err
	}
	if len(in.Series) == 0 {
		return Snippet{}, errors.New("cover chart: no series")
	}
	var cs []curve
	for _, s := range in.Series {
		for i, t := range s.Taus {
			if !(t >= 0 && t <= 1) {
				return Snippet{}, fmt.Errorf("cover chart: series %q: τ[%d] = %v outside [0, 1]", s.Name, i, t)
			}
		}
		cv, err := checkCurve(s.Name, s.Taus, s.Values, nil, nil, 0, 1, 100)
		if err != nil {
			return Snippet{}, fmt.Errorf("cover chart: %w", err)
		}
		cs = append(cs, cv)
	}
	return buildCurves(fullID, curveSpec{
		kind: "cover", title: in.Title, opts: in.Options,
		xName: "τ (per-problem accuracy threshold)", xMin: 0, xMax: 1,
		yName: "Cover@τ (% of problems)", yMin: 0, yMax: 100,
		unit: "%", tipHeader: "τ = ", curves: cs,
	})
}

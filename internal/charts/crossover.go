package charts

import (
	"errors"
	"fmt"
	"math"
)

// CurveSeries is one model's pass@k curve (or, for DiffCurve, one difference curve).
type CurveSeries struct {
	Name string
	// Ks are the sample budgets k, strictly increasing, each >= 1 (usually 1..n or powers of 2).
	Ks []int
	// Values are pass@k as fractions in [0, 1] (DiffCurve: differences in [-1, 1]), one per k.
	Values []float64
	// Lo and Hi are an optional 95% band in the same units: both empty, or both len(Ks).
	Lo, Hi []float64
	// Dashed draws the line dashed (e.g. a reference curve beside its variant).
	Dashed bool
	// Dotted draws the line dotted (when not Dashed).
	Dotted bool
	// DashedFrom, when > 0, draws the line dashed from the last k <= DashedFrom on: the
	// extrapolated part of a curve (the tooltip marks its values "extrapolated"). The
	// dashed part is a second series of the same name, so the legend entry hides both.
	DashedFrom int
	// Symbol is the marker at each point, an ECharts symbol name ("circle", "triangle",
	// "rect", "diamond", "roundRect", "pin", "arrow"); "" is a circle. With line styles it
	// tells apart curves that share a colour (one model in several comparisons).
	Symbol string
	// Color is a 1-based palette index, to give two series one model's colour; 0 colours
	// series by position.
	Color int
}

// CrossoverInput is the data of the pass@k crossover chart (Yue et al. 2025, arXiv 2504.13837,
// Fig. 1/2: base vs RL pass@k over k on a log2 axis).
type CrossoverInput struct {
	Title  string
	Series []CurveSeries // one per model; put the base model first
	// CrossoverK is k* (interpolated, so fractional) where the base curve reaches the RL
	// curve; 0 means none (no vertical line is drawn).
	CrossoverK float64
	// CrossoverLabel is the text at the top of the vertical line, e.g. "k* ≈ 45".
	CrossoverLabel string
	// Crossovers are further k* lines, one per base-vs-model pair of a comparison with more
	// than two models (then CrossoverK is left 0): each hangs on its model's series, so
	// hiding the model in the legend hides its line, and its label names the model.
	Crossovers []CrossoverLine
	Options
}

// CrossoverLine is one pair's k* line: K in [1, k max], Label its text, Series the index
// in Series of the pair's non-base model.
type CrossoverLine struct {
	K      float64
	Label  string
	Series int
}

// Crossover draws pass@k in percent (y) against k on a base-2 log axis (x: ticks 1, 2, 4, …),
// one line per model with its optional shaded 95% band, and a dashed vertical line at
// CrossoverK. The y axis runs from the lowest value rounded down to 10% up to 100%. The
// tooltip lists every model's pass@k (and interval) at the k under the pointer. The
// crossover line is attached to the first series, so hiding that series in the legend hides it.
//
// Errors: empty id prefix or series list, a series with mismatched lengths, k < 1 or not
// increasing, values outside [0, 1], lo > hi, CrossoverK in (0, 1) or beyond the largest k.
func Crossover(id string, in CrossoverInput) (Snippet, error) {
	fullID, err := chartID("crossover", id)
	if err != nil {
		return Snippet{}, err
	}
	cs, kmax, err := passkCurves(in.Series, 0, 1)
	if err != nil {
		return Snippet{}, fmt.Errorf("crossover chart: %w", err)
	}
	sp := curveSpec{
		kind: "crossover", title: in.Title, opts: in.Options,
		xName: "k (samples per problem)", xLog2: true, xMin: 1, xMax: kmax,
		yName: "pass@k (%)", yMin: percentFloor(cs), yMax: 100,
		unit: "%", tipHeader: "k = ", curves: cs,
	}
	if in.CrossoverK != 0 {
		if math.IsNaN(in.CrossoverK) || in.CrossoverK < 1 || in.CrossoverK > kmax {
			return Snippet{}, fmt.Errorf("crossover chart: crossover k %v outside [1, %v]", in.CrossoverK, kmax)
		}
		sp.vLines = append(sp.vLines, mark{x: in.CrossoverK, label: in.CrossoverLabel})
	}
	for _, l := range in.Crossovers {
		if math.IsNaN(l.K) || l.K < 1 || l.K > kmax {
			return Snippet{}, fmt.Errorf("crossover chart: crossover k %v outside [1, %v]", l.K, kmax)
		}
		if l.Series < 0 || l.Series >= len(cs) {
			return Snippet{}, fmt.Errorf("crossover chart: crossover line of series %d of %d", l.Series, len(cs))
		}
		sp.vLines = append(sp.vLines, mark{x: l.K, label: l.Label, series: l.Series})
	}
	return buildCurves(fullID, sp)
}

// DiffInput is the data of the pass@k difference chart.
type DiffInput struct {
	Title string
	// Series are pass@k(other) − pass@k(base) per k, as fractions in [-1, 1], with an optional
	// (paired bootstrap) 95% band; one per non-base model.
	Series []CurveSeries
	Options
}

// DiffCurve draws pass@k(RL) − pass@k(base) in percentage points against k on a base-2 log
// axis, one line per model with its optional band, and a solid line at zero: above zero the
// RL model solves more, below it the base model does (the crossover is where a curve crosses
// zero). Errors as for Crossover, with values in [-1, 1].
func DiffCurve(id string, in DiffInput) (Snippet, error) {
	fullID, err := chartID("diff", id)
	if err != nil {
		return Snippet{}, err
	}
	cs, kmax, err := passkCurves(in.Series, -1, 1)
	if err != nil {
		return Snippet{}, fmt.Errorf("diff chart: %w", err)
	}
	return buildCurves(fullID, curveSpec{
		kind: "diff", title: in.Title, opts: in.Options,
		xName: "k (samples per problem)", xLog2: true, xMin: 1, xMax: kmax,
		yName: "Δ pass@k (percentage points)",
		unit:  " pp", tipHeader: "k = ", curves: cs, zeroLine: true,
	})
}

// passkCurves validates pass@k-style series (values in [vmin, vmax], k >= 1) and returns them
// in percent with the largest k.
func passkCurves(in []CurveSeries, vmin, vmax float64) ([]curve, float64, error) {
	if len(in) == 0 {
		return nil, 0, errors.New("no series")
	}
	var cs []curve
	kmax := 0.0
	for _, s := range in {
		for i, k := range s.Ks {
			if k < 1 {
				return nil, 0, fmt.Errorf("series %q: k[%d] = %d, want >= 1", s.Name, i, k)
			}
		}
		cv, err := checkCurve(s.Name, intsToFloats(s.Ks), s.Values, s.Lo, s.Hi, vmin, vmax, 100)
		if err != nil {
			return nil, 0, err
		}
		kmax = math.Max(kmax, cv.xs[len(cv.xs)-1])
		if !validSymbol(s.Symbol) {
			return nil, 0, fmt.Errorf("series %q: symbol %q is not an ECharts symbol", s.Name, s.Symbol)
		}
		cv.dashed, cv.dotted, cv.color, cv.symbol, cv.dashedFrom = s.Dashed, s.Dotted, s.Color, s.Symbol, float64(s.DashedFrom)
		cs = append(cs, cv)
	}
	return cs, kmax, nil
}

// Symbols are the ECharts marker names CurveSeries.Symbol takes, in the order callers give
// them to tell curves of one colour apart.
var Symbols = []string{"circle", "triangle", "rect", "diamond", "roundRect", "pin", "arrow"}

func validSymbol(s string) bool {
	if s == "" {
		return true
	}
	for _, v := range Symbols {
		if s == v {
			return true
		}
	}
	return false
}

package charts

import (
	"errors"
	"fmt"
)

// KStarSeries is one model's crossover k* at each temperature of a sweep.
type KStarSeries struct {
	Name string
	// Temps are the temperatures, strictly increasing; K the k* at each, in [1, KMax], with
	// the 95% interval's ends Lo and Hi (both empty, or both len(Temps); an open end — no
	// crossover up to k max in some draws — is given as KMax).
	Temps     []float64
	K, Lo, Hi []float64
	Color     int // 1-based palette index; 0 = by position
}

// KStarInput is the data of the k*-by-temperature chart of a temperature sweep.
type KStarInput struct {
	Title string
	KMax  float64 // the y axis' top
	// XMin and XMax are the x axis' range (every temperature of the sweep, also those
	// without a crossover); XMax ≤ XMin: the series' own range.
	XMin, XMax float64
	Series     []KStarSeries
	Options
}

// KStarByTemperature draws the crossover k* (Yue et al. 2025, arXiv 2504.13837; y, linear,
// 1 to KMax) against the sampling temperature (x), one line per model with its 95% band.
// Errors: empty id prefix or series list, KMax < 1, lengths that differ, temperatures not
// increasing, k outside [1, KMax], lo > hi.
func KStarByTemperature(id string, in KStarInput) (Snippet, error) {
	fullID, err := chartID("kstar_temp", id)
	if err != nil {
		return Snippet{}, err
	}
	if len(in.Series) == 0 {
		return Snippet{}, errors.New("k* by temperature chart: no series")
	}
	if in.KMax < 1 {
		return Snippet{}, fmt.Errorf("k* by temperature chart: k max %v below 1", in.KMax)
	}
	var cs []curve
	xmin, xmax := 0.0, 0.0
	for i, s := range in.Series {
		cv, err := checkCurve(s.Name, s.Temps, s.K, s.Lo, s.Hi, 1, in.KMax, 1)
		if err != nil {
			return Snippet{}, fmt.Errorf("k* by temperature chart: %w", err)
		}
		cv.color = s.Color
		if i == 0 || s.Temps[0] < xmin {
			xmin = s.Temps[0]
		}
		xmax = max(xmax, s.Temps[len(s.Temps)-1])
		cs = append(cs, cv)
	}
	if in.XMax > in.XMin {
		xmin, xmax = min(xmin, in.XMin), max(xmax, in.XMax)
	}
	var lo, hi any // one temperature: ECharts decides
	if xmax > xmin {
		lo, hi = xmin, xmax
	}
	return buildCurves(fullID, curveSpec{
		kind: "kstar_temp", title: in.Title, opts: in.Options,
		xName: "temperature", xMin: lo, xMax: hi,
		yName: "crossover k*", yMin: 1, yMax: in.KMax,
		tipHeader: "T = ", curves: cs,
	})
}

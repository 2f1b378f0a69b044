package charts

import (
	"errors"
	"fmt"
	"math"
)

// CostSeries is one model's pass@k against the completion tokens its samples cost.
type CostSeries struct {
	Name string
	// Ks are the sample budgets k, strictly increasing, each >= 1.
	Ks []int
	// Tokens are the completion tokens per problem that k samples take (k × the model's mean
	// tokens per sample), one per k, each > 0 (the axis is logarithmic) and increasing.
	Tokens []float64
	// Values are pass@k as fractions in [0, 1], one per k.
	Values []float64
	// DashedFrom, when > 0, draws the line dashed from the last k <= DashedFrom on: pass@k
	// extrapolated past the model's smallest n (the tooltip says so).
	DashedFrom int
	// Color is a 1-based palette index (a model's position + 1, so it keeps its colour of the
	// other charts); 0 colours series by position.
	Color int
}

// CostInput is the data of the cost chart: pass@k against tokens spent.
type CostInput struct {
	Title  string
	Series []CostSeries // one per model with token counts
	Options
}

// costTooltipJS lists, for each model near the pointer, pass@k with its k and the tokens per
// problem (the x axis is tokens, so k must be said). Names escaped; the extrapolated part of
// a line (series curvexN) is marked, and its shared point shown once.
var costTooltipJS = js(`function (ps) {
var esc = echarts.format.encodeHTML;
if (!Array.isArray(ps)) { ps = [ps]; }
var rows = [];
for (var i = 0; i < ps.length; i++) {
  var p = ps[i]; var v = p.value;
  if (!Array.isArray(v) || v.length < 3) { continue; }
  var ext = String(p.seriesId).indexOf('curvex') === 0;
  if (!ext && i + 1 < ps.length && String(ps[i + 1].seriesId) === 'curvex' + String(p.seriesId).slice(5)) { continue; }
  var row = p.marker + esc(p.seriesName) + ': <b>' + v[1].toFixed(1) + '%</b> at k = ' + v[2] + ', ' + Math.round(v[0]).toLocaleString('en-US') + ' tokens per problem';
  if (ext) { row += ' <i>extrapolated</i>'; }
  rows.push(row);
}
return rows.join('<br>');
}`)

// tokenLabelJS writes token counts on the axis with two significant digits and k or M from a
// thousand on (the log₂ ticks fall on 1,024 = "1k", 131,072 = "130k"), whole below: short
// enough not to run into each other on a phone. The tooltip gives the exact figure.
var tokenLabelJS = js(`function (v) {
if (v >= 1e6) { return +(v / 1e6).toPrecision(2) + 'M'; }
if (v >= 1e3) { return +(v / 1e3).toPrecision(2) + 'k'; }
return String(Math.round(v));
}`)

// Cost draws pass@k in percent (y) against the completion tokens per problem that k samples
// cost (x, base-2 log axis), one line per model: where a model with longer completions needs
// more tokens for the same pass@k, its line lies to the right. The y axis runs from the lowest
// value rounded down to 10% up to 100%. Errors: empty id prefix or series list, a series with
// lengths that differ, k < 1 or not increasing, tokens not positive, not finite or not
// increasing, values outside [0, 1].
func Cost(id string, in CostInput) (Snippet, error) {
	fullID, err := chartID("cost", id)
	if err != nil {
		return Snippet{}, err
	}
	if len(in.Series) == 0 {
		return Snippet{}, errors.New("cost chart: no series")
	}
	var cs []curve
	for _, s := range in.Series {
		if len(s.Ks) != len(s.Tokens) {
			return Snippet{}, fmt.Errorf("cost chart: series %q: %d ks for %d token figures", s.Name, len(s.Ks), len(s.Tokens))
		}
		xs := make([]float64, len(s.Tokens))
		for i, k := range s.Ks {
			if k < 1 || (i > 0 && k <= s.Ks[i-1]) {
				return Snippet{}, fmt.Errorf("cost chart: series %q: k[%d] = %d, want >= 1 and increasing", s.Name, i, k)
			}
			if !(s.Tokens[i] > 0) {
				return Snippet{}, fmt.Errorf("cost chart: series %q: tokens[%d] = %v, want > 0", s.Name, i, s.Tokens[i])
			}
			// Whole hundredths: the chart draws no finer, and the page stays small.
			xs[i] = math.Round(s.Tokens[i]*100) / 100
		}
		cv, err := checkCurve(s.Name, xs, s.Values, nil, nil, 0, 1, 100)
		if err != nil {
			return Snippet{}, fmt.Errorf("cost chart: %w", err)
		}
		cv.ks, cv.color = s.Ks, s.Color
		if s.DashedFrom > 0 {
			for i, k := range s.Ks {
				if k <= s.DashedFrom {
					cv.dashedFrom = xs[i]
				}
			}
		}
		cs = append(cs, cv)
	}
	return buildCurves(fullID, curveSpec{
		kind: "cost", title: in.Title, opts: in.Options,
		xName: "completion tokens per problem", xLog2: true,
		yName: "pass@k (%)", yMin: percentFloor(cs), yMax: 100,
		unit: "%", curves: cs, tooltip: costTooltipJS, xLabel: tokenLabelJS,
	})
}

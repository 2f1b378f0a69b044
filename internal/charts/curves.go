package charts

import (
	"errors"
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// curve is one line in display units, with an optional band.
type curve struct {
	name   string
	xs     []float64
	ys     []float64
	lo, hi []float64 // nil when there is no band
	dashed bool
	dotted bool
	symbol string // "" = circle
	color  int    // 1-based palette index; 0 = by position
	// dashedFrom > 0: from the last x <= dashedFrom on the line is a
	// second, dashed series of the same name (extrapolated values).
	dashedFrom float64
	// ks, when set (only without a band), is each point's k, carried as
	// its third value for a tooltip that names it (an x that is not k).
	ks     []int
	hidden bool // off in the legend at first
}

// curveSpec describes a line chart of curves with optional 95% bands: what Crossover,
// DiffCurve, Trajectory and Cover share.
type curveSpec struct {
	kind, title string
	opts        Options
	xName       string
	xLog2       bool    // log axis with base 2; ticks at 1, 2, 4, ...
	xMin, xMax  any     // nil = ECharts decides
	yName       string  // axis name, with unit
	yMin, yMax  any     // nil = ECharts decides
	unit        string  // appended to values in the tooltip ("%", " pp")
	tipHeader   string  // before the x value in the tooltip ("k = ")
	curves      []curve // in legend order
	vLines      []mark  // vertical lines at x, each on its series
	zeroLine    bool    // horizontal line at y = 0
	tooltip     string  // JavaScript formatter (js); "" = tooltipJS(tipHeader, unit)
	xLabel      string  // JavaScript x-axis label formatter (js); "" = ECharts' numbers
}

type mark struct {
	x      float64
	label  string
	series int // the series it hangs on (hidden with it)
}

// BandsLegend is the legend entry that shows and hides the 95% bands of a curve chart. The
// bands are on at first when at most two curves have one, off otherwise.
const BandsLegend = "95% CI bands"

// bandOpacity is a band's fill.
const bandOpacity = 0.18

// bandsJS hides the band of a curve hidden in the legend (curve i's band is band_width i) and
// shows it again with its curve.
var bandsJS = `['legendselectchanged', 'legendselected', 'legendunselected', 'legendselectall', 'legendinverseselect'].forEach(function (ev) { %MY_ECHARTS%.on(ev, function (e) {
  const inst = %MY_ECHARTS%;
  const series = inst.getOption().series || [];
  const names = {};
  series.forEach(function (s) { const id = String(s.id); if (id.indexOf('curve') === 0) { names[id.slice(5)] = s.name; } });
  const update = [];
  series.forEach(function (s) {
    const id = String(s.id);
    if (id.indexOf('band_width') !== 0) { return; }
    const shown = e.selected[names[id.slice(10)]] !== false;
    update.push({id: id, areaStyle: {opacity: shown ? ` + fmt.Sprint(bandOpacity) + ` : 0}});
  });
  if (update.length) { inst.setOption({series: update}); }
}); });`

// tooltipJS formats the axis tooltip: series names escaped (they are caller data), band
// helper series skipped, the 95% interval shown next to each value when present.
func tooltipJS(header, unit string) string {
	return js(fmt.Sprintf(`function (ps) {
var esc = echarts.format.encodeHTML;
if (!Array.isArray(ps)) { ps = [ps]; }
var rows = [];
for (var i = 0; i < ps.length; i++) {
  var p = ps[i]; var v = p.value;
  if (String(p.seriesId).indexOf('band') === 0 || !Array.isArray(v)) { continue; }
  var ext = String(p.seriesId).indexOf('curvex') === 0;
  if (!ext && i + 1 < ps.length && String(ps[i + 1].seriesId) === 'curvex' + String(p.seriesId).slice(5)) { continue; }
  var row = p.marker + esc(p.seriesName) + ': <b>' + v[1].toFixed(1) + '%[2]s</b>';
  if (v.length > 3) { row += ' (95%% CI ' + v[2].toFixed(1) + '–' + v[3].toFixed(1) + ')'; }
  if (ext) { row += ' <i>extrapolated</i>'; }
  rows.push(row);
}
if (rows.length === 0) { return ''; }
return '%[1]s' + esc(String(ps[0].value[0])) + '<br>' + rows.join('<br>');
}`, header, unit))
}

func buildCurves(id string, sp curveSpec) (Snippet, error) {
	c := charts.NewLine()
	bc := &c.BaseConfiguration
	var seriesExtra []any
	var legend []any
	bands := 0
	for i, cv := range sp.curves {
		col := color(i)
		if cv.color > 0 {
			col = color(cv.color - 1)
		}
		lineType, symbol := "solid", "circle"
		switch {
		case cv.dashed:
			lineType = "dashed"
		case cv.dotted:
			lineType = "dotted"
		}
		if cv.symbol != "" {
			symbol = cv.symbol
		}
		legend = append(legend, cv.name)
		data := make([][]float64, len(cv.xs))
		for j := range cv.xs {
			data[j] = []float64{cv.xs[j], cv.ys[j]}
			if cv.lo != nil {
				data[j] = append(data[j], cv.lo[j], cv.hi[j])
			} else if cv.ks != nil {
				data[j] = append(data[j], float64(cv.ks[j]))
			}
		}
		var dashedData [][]float64
		if cv.dashedFrom > 0 {
			cut := 0 // the last point at or below dashedFrom: both parts share it
			for j, x := range cv.xs {
				if x <= cv.dashedFrom {
					cut = j
				}
			}
			if cut < len(data)-1 {
				data, dashedData = data[:cut+1], data[cut:]
			}
		}
		main := charts.SingleSeries{
			Name: cv.name, Type: "line", Id: fmt.Sprintf("curve%d", i), Data: data,
			Symbol: symbol, SymbolSize: symbolSize(symbol), ShowSymbol: opts.Bool(len(cv.xs) <= 40), Color: col,
			LineStyle: &opts.LineStyle{Width: 2, Color: col, Type: lineType},
		}
		extra := map[string]any{"z": 3}
		var lines []any
		for _, m := range sp.vLines {
			if m.series == i {
				lines = append(lines, map[string]any{"xAxis": m.x, "name": m.label})
			}
		}
		if len(lines) > 0 {
			main.MarkLines = &opts.MarkLines{
				Data: lines,
				MarkLineStyle: opts.MarkLineStyle{
					Symbol:    []string{"none", "none"},
					LineStyle: &opts.LineStyle{Color: "#444", Type: "dashed", Width: 1.5},
					Label:     &opts.Label{Show: opts.Bool(true), Formatter: "{b}", Position: "end", Color: "#222"},
				},
			}
			extra["markLine"] = map[string]any{"silent": true}
		}
		bc.MultiSeries = append(bc.MultiSeries, main)
		seriesExtra = append(seriesExtra, extra)
		if dashedData != nil {
			bc.MultiSeries = append(bc.MultiSeries, charts.SingleSeries{
				Name: cv.name, Type: "line", Id: fmt.Sprintf("curvex%d", i), Data: dashedData,
				Symbol: symbol, SymbolSize: symbolSize(symbol), ShowSymbol: opts.Bool(false), Color: col,
				LineStyle: &opts.LineStyle{Width: 2, Color: col, Type: "dashed"},
			})
			seriesExtra = append(seriesExtra, map[string]any{"z": 3})
		}
		if cv.lo == nil {
			continue
		}
		// The band is two stacked, line-less series: the lower bound, then (upper − lower)
		// with a filled area. Every band is named BandsLegend, so one legend entry shows and
		// hides them all; hiding a model hides its band too (bandsJS).
		lo := make([][]float64, len(cv.xs))
		width := make([][]float64, len(cv.xs))
		for j := range cv.xs {
			lo[j] = []float64{cv.xs[j], cv.lo[j]}
			width[j] = []float64{cv.xs[j], cv.hi[j] - cv.lo[j]}
		}
		stack := fmt.Sprintf("band%d", i)
		invisible := &opts.LineStyle{Opacity: opts.Float(0)}
		bc.MultiSeries = append(bc.MultiSeries,
			charts.SingleSeries{Name: BandsLegend, Type: "line", Id: fmt.Sprintf("band_lo%d", i), Stack: stack,
				Data: lo, Symbol: "none", Color: col, LineStyle: invisible},
			charts.SingleSeries{Name: BandsLegend, Type: "line", Id: fmt.Sprintf("band_width%d", i), Stack: stack,
				Data: width, Symbol: "none", Color: col, LineStyle: invisible,
				AreaStyle: &opts.AreaStyle{Color: col, Opacity: opts.Float(bandOpacity)}},
		)
		bands++
		// stackStrategy "all": the default stacks only values of the same sign, which would
		// detach a band from a negative lower bound (DiffCurve).
		bandExtra := map[string]any{"silent": true, "stackStrategy": "all", "z": 1,
			"emphasis": map[string]any{"disabled": true}}
		seriesExtra = append(seriesExtra, bandExtra, bandExtra)
	}
	if sp.zeroLine && len(bc.MultiSeries) > 0 {
		bc.MultiSeries[0].MarkLines = appendZeroLine(bc.MultiSeries[0].MarkLines)
		seriesExtra[0].(map[string]any)["markLine"] = map[string]any{"silent": true}
	}

	xAxis := map[string]any{"type": "value", "name": sp.xName, "nameLocation": "middle", "nameGap": 28,
		"axisLabel": map[string]any{"hideOverlap": true},
		"splitLine": map[string]any{"show": true, "lineStyle": map[string]any{"opacity": 0.5}}}
	if sp.xLog2 {
		xAxis["type"] = "log"
		xAxis["logBase"] = 2
	}
	setIf(xAxis, "min", sp.xMin)
	setIf(xAxis, "max", sp.xMax)
	if sp.xLabel != "" {
		label, _ := xAxis["axisLabel"].(map[string]any)
		if label == nil {
			label = map[string]any{}
			xAxis["axisLabel"] = label
		}
		label["formatter"] = sp.xLabel
	}
	yAxis := map[string]any{"type": "value", "name": sp.yName, "nameLocation": "middle", "nameGap": 42}
	setIf(yAxis, "min", sp.yMin)
	setIf(yAxis, "max", sp.yMax)

	lg := bottomLegend(legend)
	selected := map[string]any{}
	if bands > 0 {
		// Bands of more than two curves overlap into one grey mass: off until asked for.
		lg["data"] = append(legend, map[string]any{"name": BandsLegend, "icon": "rect",
			"itemStyle": map[string]any{"color": "#8c959f", "opacity": 0.45}})
		selected[BandsLegend] = bands <= 2
	}
	for _, cv := range sp.curves {
		if cv.hidden {
			selected[cv.name] = false
		}
	}
	if len(selected) > 0 {
		lg["selected"] = selected
	}
	overlay := map[string]any{
		"series": seriesExtra,
		"xAxis":  []any{xAxis},
		"yAxis":  []any{yAxis},
		// top: the k* label above the plot stays clear of the save-image icon.
		"grid":   map[string]any{"left": 64, "right": 28, "top": 52, "bottom": 54},
		"legend": lg,
		"tooltip": map[string]any{"trigger": "axis", "formatter": tooltipJS(sp.tipHeader, sp.unit),
			"axisPointer": map[string]any{"type": "line"}},
	}
	if sp.tooltip != "" {
		overlay["tooltip"].(map[string]any)["formatter"] = sp.tooltip
	}
	if bands > 0 {
		bc.AddJSFuncStrs(opts.FuncOpts(bandsJS))
	}
	if err := setup(bc, id, sp.title, sp.opts, 420, overlay); err != nil {
		return Snippet{}, err
	}
	return finish(id, c)
}

// symbolSize is a marker's size in px: shapes other than the default dot need a little more
// to be told apart.
func symbolSize(symbol string) int {
	if symbol == "circle" {
		return 5
	}
	return 8
}

func appendZeroLine(m *opts.MarkLines) *opts.MarkLines {
	if m == nil {
		m = &opts.MarkLines{MarkLineStyle: opts.MarkLineStyle{
			Symbol:    []string{"none", "none"},
			LineStyle: &opts.LineStyle{Color: "#444", Type: "solid", Width: 1},
			Label:     &opts.Label{Show: opts.Bool(false)},
		}}
	}
	m.Data = append(m.Data, map[string]any{"yAxis": 0, "name": "0"})
	return m
}

func setIf(m map[string]any, k string, v any) {
	if v != nil {
		m[k] = v
	}
}

// checkCurve validates one curve given in fractions and converts it to display units
// (value × scale). lo and hi must both be empty (no band) or as long as xs.
func checkCurve(name string, xs []float64, values, lo, hi []float64, vmin, vmax, scale float64) (curve, error) {
	if name == "" {
		return curve{}, errors.New("series name is empty")
	}
	if len(xs) == 0 {
		return curve{}, fmt.Errorf("series %q has no points", name)
	}
	if len(values) != len(xs) {
		return curve{}, fmt.Errorf("series %q: %d values for %d x positions", name, len(values), len(xs))
	}
	band := len(lo) > 0 || len(hi) > 0
	if band && (len(lo) != len(xs) || len(hi) != len(xs)) {
		return curve{}, fmt.Errorf("series %q: band has %d lower and %d upper bounds for %d points", name, len(lo), len(hi), len(xs))
	}
	cv := curve{name: name, xs: xs, ys: make([]float64, len(xs))}
	if band {
		cv.lo, cv.hi = make([]float64, len(xs)), make([]float64, len(xs))
	}
	for j := range xs {
		if math.IsNaN(xs[j]) || math.IsInf(xs[j], 0) {
			return curve{}, fmt.Errorf("series %q: x[%d] = %v is not finite", name, j, xs[j])
		}
		if j > 0 && xs[j] <= xs[j-1] {
			return curve{}, fmt.Errorf("series %q: x positions not increasing at %d (%v after %v)", name, j, xs[j], xs[j-1])
		}
		check := func(what string, v float64) error {
			if !(v >= vmin && v <= vmax) { // also rejects NaN
				return fmt.Errorf("series %q: %s[%d] = %v outside [%v, %v]", name, what, j, v, vmin, vmax)
			}
			return nil
		}
		if err := check("value", values[j]); err != nil {
			return curve{}, err
		}
		cv.ys[j] = shown(values[j] * scale)
		if band {
			if err := check("lo", lo[j]); err != nil {
				return curve{}, err
			}
			if err := check("hi", hi[j]); err != nil {
				return curve{}, err
			}
			if lo[j] > hi[j] {
				return curve{}, fmt.Errorf("series %q: lo[%d] = %v above hi = %v", name, j, lo[j], hi[j])
			}
			cv.lo[j], cv.hi[j] = shown(lo[j]*scale), shown(hi[j]*scale)
		}
	}
	return cv, nil
}

// shown rounds a value in display units (percent, points) to 4 decimals:
// far finer than a chart or its 1-decimal tooltip shows, and it keeps the
// page's chart data a third of the size of full float64 digits.
func shown(v float64) float64 { return math.Round(v*1e4) / 1e4 }

func intsToFloats(ks []int) []float64 {
	out := make([]float64, len(ks))
	for i, k := range ks {
		out[i] = float64(k)
	}
	return out
}

// percentFloor is the y-axis minimum for curves in percent: the lowest value (or lower bound)
// rounded down to a multiple of 10, so curves that all sit high (pass@k at large k) are not
// squeezed into the top of a 0–100 axis, and at least 1 point below it, so a curve at exactly
// 50% is not drawn on the x axis itself (a collection screenshot lost two such curves).
func percentFloor(cs []curve) float64 {
	lowest := 100.0
	for _, c := range cs {
		for j, y := range c.ys {
			lowest = math.Min(lowest, y)
			if c.lo != nil {
				lowest = math.Min(lowest, c.lo[j])
			}
		}
	}
	return math.Max(0, math.Floor((lowest-1)/10)*10)
}

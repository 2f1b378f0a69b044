package charts

import (
	"errors"
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// Box is a five-number summary (as passk.Summarize gives it) and the number of values.
type Box struct {
	N                        int
	Min, Q1, Median, Q3, Max float64
}

// BoxGroup is one source model's boxes: its correct and incorrect completions (nil when
// there are none).
type BoxGroup struct {
	Name               string
	Correct, Incorrect *Box
}

// PerplexityInput is the perplexity-under-the-base-model chart (Yue et al. 2025, arXiv
// 2504.13837, Fig. 6): one group of boxes per source model.
type PerplexityInput struct {
	Title  string
	YName  string // y axis name, e.g. "perplexity under Qwen2.5-7B"
	Groups []BoxGroup
	Options
}

// Perplexity draws box plots (min, quartiles, max) of per-completion perplexity, one category
// per source model with its correct completions' box (green) beside its incorrect ones'
// (red); the category label carries how many completions each box holds. Errors: empty id
// prefix or groups, an empty name, a box with n < 1, values that are not finite or not
// ordered min ≤ q1 ≤ median ≤ q3 ≤ max.
func Perplexity(id string, in PerplexityInput) (Snippet, error) {
	fullID, err := chartID("perplexity", id)
	if err != nil {
		return Snippet{}, err
	}
	if len(in.Groups) == 0 {
		return Snippet{}, errors.New("perplexity chart: no models")
	}
	c := charts.NewBoxPlot()
	var cats []string
	var correct, incorrect []opts.BoxPlotData
	for _, g := range in.Groups {
		if g.Name == "" {
			return Snippet{}, errors.New("perplexity chart: a model has an empty name")
		}
		label := g.Name
		for _, x := range []struct {
			what string
			b    *Box
			dst  *[]opts.BoxPlotData
		}{{"correct", g.Correct, &correct}, {"incorrect", g.Incorrect, &incorrect}} {
			if x.b == nil {
				*x.dst = append(*x.dst, opts.BoxPlotData{Value: []any{}})
				label += fmt.Sprintf("\n%s: none", x.what)
				continue
			}
			if err := x.b.check(); err != nil {
				return Snippet{}, fmt.Errorf("perplexity chart: %s, %s: %w", g.Name, x.what, err)
			}
			*x.dst = append(*x.dst, opts.BoxPlotData{Value: []float64{x.b.Min, x.b.Q1, x.b.Median, x.b.Q3, x.b.Max}})
			label += fmt.Sprintf("\n%s: %d", x.what, x.b.N)
		}
		cats = append(cats, label)
	}
	c.SetXAxis(cats)
	c.AddSeries("correct", correct, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
		s.ItemStyle = &opts.ItemStyle{Color: "rgba(145,204,117,0.35)", BorderColor: "#3ba272"}
	}))
	c.AddSeries("incorrect", incorrect, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
		s.ItemStyle = &opts.ItemStyle{Color: "rgba(238,102,102,0.3)", BorderColor: "#c23531"}
	}))
	overlay := map[string]any{
		// Each category's label (the model and its two counts) breaks
		// within its own width, so neighbours never run into each other.
		"xAxis": []any{map[string]any{"type": "category", "axisLabel": map[string]any{"interval": 0, "fontSize": 11,
			"width": 88, "overflow": "break", "lineHeight": 14}}},
		// The axis follows the boxes (scale: true), not a fixed 1 to a round
		// ceiling that squeezed boxes near 1 into a line.
		"yAxis": []any{map[string]any{"type": "value", "name": in.YName, "nameLocation": "middle", "nameGap": 42,
			"scale": true}},
		"grid":    map[string]any{"left": 64, "right": 28, "top": 48, "bottom": 72},
		"legend":  bottomLegend([]any{"correct", "incorrect"}),
		"tooltip": map[string]any{"trigger": "item"},
	}
	if err := setup(&c.BaseConfiguration, fullID, in.Title, in.Options, 400, overlay); err != nil {
		return Snippet{}, err
	}
	return finish(fullID, c)
}

func (b *Box) check() error {
	vs := []float64{b.Min, b.Q1, b.Median, b.Q3, b.Max}
	if b.N < 1 {
		return fmt.Errorf("n = %d", b.N)
	}
	for i, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("value %d is %v", i, v)
		}
		if i > 0 && v < vs[i-1] {
			return fmt.Errorf("five-number summary not ordered: %v", vs)
		}
	}
	return nil
}

// EntropyPoint is one problem: the base model's answer entropy (X) and the other model's (Y),
// in bits.
type EntropyPoint struct {
	ProblemID string
	X, Y      float64
}

// EntropySeries is one other model's problems.
type EntropySeries struct {
	Name   string
	Points []EntropyPoint
}

// EntropyInput is the answer-entropy scatter (Wu et al. 2025, "The Invisible Leash", arXiv
// 2507.14843, §4): per problem, the other model's entropy of final answers against the base
// model's.
type EntropyInput struct {
	Title  string
	XName  string // e.g. "base model: answer entropy (bits)"
	Series []EntropySeries
	Options
}

// Entropy draws one point per problem (x: base model's answer entropy, y: the other model's)
// with the diagonal y = x: points below it are problems where the other model's answers are
// less diverse. The tooltip names the problem (escaped). Errors: empty id prefix or series, a
// series without a name, a negative or non-finite entropy.
func Entropy(id string, in EntropyInput) (Snippet, error) {
	fullID, err := chartID("entropy", id)
	if err != nil {
		return Snippet{}, err
	}
	if len(in.Series) == 0 {
		return Snippet{}, errors.New("entropy chart: no series")
	}
	c := charts.NewScatter()
	top := 1.0
	var legend []any
	for i, s := range in.Series {
		if s.Name == "" {
			return Snippet{}, fmt.Errorf("entropy chart: series %d has an empty name", i)
		}
		data := make([]opts.ScatterData, len(s.Points))
		for j, p := range s.Points {
			for _, v := range []float64{p.X, p.Y} {
				if !(v >= 0) || math.IsInf(v, 0) {
					return Snippet{}, fmt.Errorf("entropy chart: series %q, problem %q: entropy %v", s.Name, p.ProblemID, v)
				}
			}
			top = math.Max(top, math.Max(p.X, p.Y))
			data[j] = opts.ScatterData{Name: p.ProblemID, Value: []float64{p.X, p.Y}, SymbolSize: 7}
		}
		legend = append(legend, s.Name)
		c.AddSeries(s.Name, data, charts.WithSeriesOpts(func(ss *charts.SingleSeries) { ss.Color = color(i + 1) }))
	}
	lim := math.Ceil(top*2) / 2
	series := make([]any, len(in.Series))
	for i := range series {
		series[i] = map[string]any{"itemStyle": map[string]any{"opacity": 0.7}}
	}
	series[0].(map[string]any)["markLine"] = map[string]any{"silent": true, "symbol": []string{"none", "none"},
		"lineStyle": map[string]any{"color": "#444", "type": "dashed", "width": 1},
		// Inside the plot's corner: at "end" the label ran past the grid and was cut to "equa".
		"label": map[string]any{"show": true, "formatter": "equal entropy", "position": "insideEndTop"},
		"data":  []any{[]any{map[string]any{"coord": []float64{0, 0}}, map[string]any{"coord": []float64{lim, lim}}}}}
	overlay := map[string]any{
		"series": series,
		"xAxis": []any{map[string]any{"type": "value", "name": in.XName, "nameLocation": "middle", "nameGap": 28,
			"min": 0, "max": lim}},
		"yAxis": []any{map[string]any{"type": "value", "name": "other model: answer entropy (bits)", "nameLocation": "middle",
			"nameGap": 42, "min": 0, "max": lim}},
		"grid":   map[string]any{"left": 64, "right": 28, "top": 48, "bottom": 54},
		"legend": bottomLegend(legend),
		"tooltip": map[string]any{"trigger": "item", "formatter": js(`function (p) {
var esc = echarts.format.encodeHTML;
return esc(p.seriesName) + '<br>problem ' + esc(String(p.name)) + '<br>base ' + p.value[0].toFixed(2) + ' bits, this model ' + p.value[1].toFixed(2) + ' bits';
}`)},
	}
	if err := setup(&c.BaseConfiguration, fullID, in.Title, in.Options, 420, overlay); err != nil {
		return Snippet{}, err
	}
	return finish(fullID, c)
}

// SupportBar is one base/other pair's problems by support region.
type SupportBar struct {
	Name                                 string // e.g. "SimpleRL vs base"
	Preserved, Shrunk, Expanded, Outside int
}

// SupportInput is the empirical-support chart (Wu et al. 2025, arXiv 2507.14843, §3).
type SupportInput struct {
	Title string
	Bars  []SupportBar
	Options
}

// Support draws one horizontal stacked bar per pair: preserved (in both supports), shrunk (the
// base model's only), expanded (the other model's only) and outside both, in problems. Errors:
// empty id prefix or bars, an empty name, a negative count.
func Support(id string, in SupportInput) (Snippet, error) {
	fullID, err := chartID("support", id)
	if err != nil {
		return Snippet{}, err
	}
	if len(in.Bars) == 0 {
		return Snippet{}, errors.New("support chart: no pairs")
	}
	c := charts.NewBar()
	var names []string
	cols := map[string][]opts.BarData{}
	order := []string{"preserved", "shrunk", "expanded", "outside both"}
	for _, b := range in.Bars {
		if b.Name == "" {
			return Snippet{}, errors.New("support chart: a pair has an empty name")
		}
		for i, n := range []int{b.Preserved, b.Shrunk, b.Expanded, b.Outside} {
			if n < 0 {
				return Snippet{}, fmt.Errorf("support chart: %s: %s = %d", b.Name, order[i], n)
			}
			cols[order[i]] = append(cols[order[i]], opts.BarData{Value: n})
		}
		names = append(names, b.Name)
	}
	c.SetXAxis(names)
	colours := []string{"#91cc75", "#ee6666", "#5470c6", "#c8c8c8"}
	for i, k := range order {
		c.AddSeries(k, cols[k], charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.Stack, s.Color = "support", colours[i]
			s.Label = &opts.Label{Show: opts.Bool(true), Position: "inside", FontSize: 11}
		}))
	}
	overlay := map[string]any{
		// Horizontal bars: the category axis is y.
		// hideOverlap: at a phone's width the counts' ticks (90, 120, 150) ran into each other.
		"xAxis": []any{map[string]any{"type": "value", "name": "problems", "nameLocation": "middle", "nameGap": 28, "minInterval": 1,
			"axisLabel": map[string]any{"hideOverlap": true}}},
		"yAxis":   []any{map[string]any{"type": "category", "data": names}},
		"grid":    map[string]any{"left": 140, "right": 28, "top": 48, "bottom": 46},
		"legend":  bottomLegend(legendData(order)),
		"tooltip": map[string]any{"trigger": "axis", "axisPointer": map[string]any{"type": "shadow"}},
	}
	if err := setup(&c.BaseConfiguration, fullID, in.Title, in.Options, 120+60*len(in.Bars), overlay); err != nil {
		return Snippet{}, err
	}
	return finish(fullID, c)
}

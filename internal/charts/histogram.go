package charts

import (
	"errors"
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// HistSeries is one model's problem counts per bin.
type HistSeries struct {
	Name   string
	Counts []int // one per label, >= 0
}

// HistogramInput is the per-problem accuracy histogram (c/n binned; exact 0 and exact 1 as
// their own bins, where RL-tuned models show a U shape).
type HistogramInput struct {
	Title string
	// Labels name the bins in order, e.g. "0", "(0,0.1]", …, "(0.9,1)", "1".
	Labels []string
	Series []HistSeries
	Options
}

// Histogram draws grouped bars, one bar per model side by side in each bin; y is the number of
// problems, with the count above each bar when there are at most three models. Errors: empty
// id prefix, no labels or series, a series with an empty name, a count list whose length
// differs from Labels, or a negative count.
func Histogram(id string, in HistogramInput) (Snippet, error) {
	fullID, err := chartID("histogram", id)
	if err != nil {
		return Snippet{}, err
	}
	if len(in.Labels) == 0 || len(in.Series) == 0 {
		return Snippet{}, errors.New("histogram chart: no bins or no series")
	}
	c := charts.NewBar()
	c.SetXAxis(in.Labels)
	var legend []any
	for i, s := range in.Series {
		if s.Name == "" {
			return Snippet{}, fmt.Errorf("histogram chart: series %d has an empty name", i)
		}
		if len(s.Counts) != len(in.Labels) {
			return Snippet{}, fmt.Errorf("histogram chart: series %q has %d counts for %d bins", s.Name, len(s.Counts), len(in.Labels))
		}
		data := make([]opts.BarData, len(s.Counts))
		for j, n := range s.Counts {
			if n < 0 {
				return Snippet{}, fmt.Errorf("histogram chart: series %q: count[%d] = %d is negative", s.Name, j, n)
			}
			data[j] = opts.BarData{Value: n}
		}
		legend = append(legend, s.Name)
		c.AddSeries(s.Name, data, charts.WithSeriesOpts(func(ss *charts.SingleSeries) {
			ss.Color = color(i)
			ss.Label = &opts.Label{Show: opts.Bool(len(in.Series) <= 3), Position: "top", FontSize: 10}
		}))
	}
	// Every bin keeps its label; beyond 8 bins they are tilted to fit side by side.
	rotate := 0
	if len(in.Labels) > 8 {
		rotate = 30
	}
	overlay := map[string]any{
		"xAxis": []any{map[string]any{"type": "category", "name": "per-problem accuracy c/n",
			"nameLocation": "middle", "nameGap": 44, "axisLabel": map[string]any{"interval": 0, "rotate": rotate, "fontSize": 11}}},
		"yAxis": []any{map[string]any{"type": "value", "name": "problems", "nameLocation": "middle",
			"nameGap": 42, "minInterval": 1}},
		// top: the count above the tallest bar stays clear of the save-image icon.
		"grid":    map[string]any{"left": 64, "right": 28, "top": 52, "bottom": 68},
		"legend":  bottomLegend(legend),
		"tooltip": map[string]any{"trigger": "axis", "axisPointer": map[string]any{"type": "shadow"}},
	}
	if err := setup(&c.BaseConfiguration, fullID, in.Title, in.Options, 380, overlay); err != nil {
		return Snippet{}, err
	}
	return finish(fullID, c)
}

package charts

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// UpSetBar is one exclusive intersection: the problems solved by exactly the models in Members.
type UpSetBar struct {
	// Members are indices into UpSetInput.Models; empty means "solved by none".
	Members []int
	Count   int // >= 0
}

// UpSetInput is the solved-set overlap of several models (Lex et al. 2014, "UpSet: Visualization
// of Intersecting Sets"), the readable alternative to a Venn diagram beyond three sets.
type UpSetInput struct {
	Title  string
	Models []string
	Sets   []UpSetBar
	Options
}

// UpSet draws a bar per exclusive intersection (sorted by count, largest first; equal counts
// keep the input order) above a dot matrix with one row per model: a dark dot where the model
// is a member, joined by a vertical line. Row labels carry each model's solved total (the sum
// of the bars it is a member of). Errors: empty id prefix, no models or sets, a member index
// out of range or repeated, the same member set twice, a negative count.
func UpSet(id string, in UpSetInput) (Snippet, error) {
	fullID, err := chartID("upset", id)
	if err != nil {
		return Snippet{}, err
	}
	if len(in.Models) == 0 || len(in.Sets) == 0 {
		return Snippet{}, errors.New("upset chart: no models or no sets")
	}
	totals := make([]int, len(in.Models))
	seen := map[string]bool{}
	for i, s := range in.Sets {
		if s.Count < 0 {
			return Snippet{}, fmt.Errorf("upset chart: set %d: count %d is negative", i, s.Count)
		}
		m := slices.Clone(s.Members)
		slices.Sort(m)
		for j, x := range m {
			if x < 0 || x >= len(in.Models) {
				return Snippet{}, fmt.Errorf("upset chart: set %d: member %d out of range [0, %d)", i, x, len(in.Models))
			}
			if j > 0 && m[j-1] == x {
				return Snippet{}, fmt.Errorf("upset chart: set %d: member %d repeated", i, x)
			}
			totals[x] += s.Count
		}
		key := fmt.Sprint(m)
		if seen[key] {
			return Snippet{}, fmt.Errorf("upset chart: set %d: member set %v given twice", i, m)
		}
		seen[key] = true
	}
	sets := slices.Clone(in.Sets)
	sort.SliceStable(sets, func(a, b int) bool { return sets[a].Count > sets[b].Count })

	cats := make([]string, len(sets))
	bars := make([]opts.BarData, len(sets))
	var in1, out, links [][]int
	for i, s := range sets {
		names := make([]string, len(s.Members))
		member := make([]bool, len(in.Models))
		lo, hi := len(in.Models), -1
		for j, x := range s.Members {
			names[j] = in.Models[x]
			member[x] = true
			lo, hi = min(lo, x), max(hi, x)
		}
		if len(names) == 0 {
			cats[i] = "none of the models"
		} else {
			cats[i] = strings.Join(names, " + ")
		}
		bars[i] = opts.BarData{Value: s.Count}
		for m := range in.Models {
			if member[m] {
				in1 = append(in1, []int{i, m})
			} else {
				out = append(out, []int{i, m})
			}
		}
		if hi > lo {
			links = append(links, []int{i, lo, hi})
		}
	}
	rows := make([]string, len(in.Models))
	for m, name := range in.Models {
		rows[m] = fmt.Sprintf("%s (%d)", name, totals[m])
	}

	const top, barH, rowH = 66, 200, 26 // top: room for the title and the tallest bar's label above the bars
	matrixTop := top + barH + 12
	height := matrixTop + rowH*len(in.Models) + 16

	c := charts.NewBar()
	c.SetXAxis(cats)
	c.AddSeries("solved by exactly", bars, charts.WithSeriesOpts(func(ss *charts.SingleSeries) {
		ss.Color = "#4a4a4a"
		ss.Label = &opts.Label{Show: opts.Bool(true), Position: "top", FontSize: 11}
		ss.BarMaxWidth = "36"
	}))
	bc := &c.BaseConfiguration
	bc.MultiSeries = append(bc.MultiSeries,
		charts.SingleSeries{Name: "member", Type: "scatter", XAxisIndex: 1, YAxisIndex: 1,
			Data: in1, SymbolSize: 13, Color: "#2b2b2b"},
		charts.SingleSeries{Name: "not a member", Type: "scatter", XAxisIndex: 1, YAxisIndex: 1,
			Data: out, SymbolSize: 13, Color: "#dddddd"},
		charts.SingleSeries{Name: "link", Type: "custom", XAxisIndex: 1, YAxisIndex: 1,
			Data: links, RenderItem: (opts.FuncOpts(`function (params, api) {
var a = api.coord([api.value(0), api.value(1)]);
var b = api.coord([api.value(0), api.value(2)]);
return {type: 'line', shape: {x1: a[0], y1: a[1], x2: b[0], y2: b[1]}, style: {stroke: '#2b2b2b', lineWidth: 3}};
}`))},
	)
	dots := map[string]any{"silent": true, "z": 3, "tooltip": map[string]any{"show": false}}
	hidden := map[string]any{"show": false}
	overlay := map[string]any{
		"series": []any{map[string]any{},
			dots, dots, map[string]any{"silent": true, "z": 2, "tooltip": map[string]any{"show": false},
				"encode": map[string]any{"x": 0, "y": []int{1, 2}}}},
		"grid": []any{
			map[string]any{"left": 190, "right": 24, "top": top, "height": barH},
			map[string]any{"left": 190, "right": 24, "top": matrixTop, "height": rowH * len(in.Models)},
		},
		"xAxis": []any{
			map[string]any{"type": "category", "gridIndex": 0, "axisLabel": hidden, "axisTick": hidden},
			map[string]any{"type": "category", "gridIndex": 1, "data": cats, "axisLabel": hidden,
				"axisTick": hidden, "axisLine": hidden},
		},
		"yAxis": []any{
			map[string]any{"type": "value", "gridIndex": 0, "name": "problems", "nameLocation": "middle",
				"nameGap": 42, "minInterval": 1},
			map[string]any{"type": "category", "gridIndex": 1, "data": rows, "inverse": true,
				"axisTick": hidden, "axisLine": hidden, "splitLine": map[string]any{"show": false},
				"axisLabel": map[string]any{"width": 170, "overflow": "truncate"}},
		},
		"legend":  map[string]any{"show": false},
		"tooltip": map[string]any{"trigger": "item"},
	}
	if err := setup(bc, fullID, in.Title, in.Options, height, overlay); err != nil {
		return Snippet{}, err
	}
	return finish(fullID, c)
}

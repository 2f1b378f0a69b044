package charts

import (
	"errors"
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/event"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// FlowStep is one checkpoint's problem flows against the point before it.
type FlowStep struct {
	Label string // "step 300"
	// Gained counts the problems solved here and not before, of which
	// Regained had been solved at some earlier point; Lost the problems
	// solved before and not here. All >= 0, Regained <= Gained.
	Gained, Regained, Lost int
	// URLs, when set, are where a click on the bar goes (the list of its
	// problems): keys "gained", "regained", "lost".
	URLs map[string]string
}

// FlowsInput is a training run's flows, one bar group per checkpoint.
type FlowsInput struct {
	Title string
	Steps []FlowStep
	Options
}

// Flows draws the problems gained (up, newly solved and regained stacked)
// and lost (down) at each checkpoint, with each bar's count; a click on a
// bar with a URL goes there. Errors: empty id prefix, no steps, an empty
// label, negative counts, Regained > Gained.
func Flows(id string, in FlowsInput) (Snippet, error) {
	fullID, err := chartID("flows", id)
	if err != nil {
		return Snippet{}, err
	}
	if len(in.Steps) == 0 {
		return Snippet{}, errors.New("flows chart: no steps")
	}
	labels := make([]string, len(in.Steps))
	type item = map[string]any
	var fresh, regained, lost []any
	for i, s := range in.Steps {
		if s.Label == "" {
			return Snippet{}, fmt.Errorf("flows chart: step %d has no label", i)
		}
		if s.Gained < 0 || s.Lost < 0 || s.Regained < 0 || s.Regained > s.Gained {
			return Snippet{}, fmt.Errorf("flows chart: %s: gained %d, regained %d, lost %d", s.Label, s.Gained, s.Regained, s.Lost)
		}
		labels[i] = s.Label
		at := func(v int, kind string) item {
			it := item{"value": v}
			if u := s.URLs[kind]; u != "" && v != 0 {
				it["url"] = u
			}
			return it
		}
		fresh = append(fresh, at(s.Gained-s.Regained, "gained"))
		regained = append(regained, at(s.Regained, "regained"))
		lost = append(lost, at(-s.Lost, "lost"))
	}
	label := map[string]any{"show": true, "fontSize": 10, "formatter": js(`function (p) { return p.value === 0 ? '' : String(Math.abs(p.value)); }`)}
	bar := func(name, color string, data []any, pos string) map[string]any {
		l := map[string]any{}
		for k, v := range label {
			l[k] = v
		}
		l["position"] = pos
		return map[string]any{"type": "bar", "name": name, "stack": "flow", "data": data, "itemStyle": map[string]any{"color": color},
			"label": l, "cursor": "pointer", "barMaxWidth": 48}
	}
	c := charts.NewBar()
	c.SetGlobalOptions(charts.WithEventListeners(event.Listener{EventName: "click", Handler: opts.FuncOpts(
		`function (p) { if (p.data && typeof p.data.url === 'string') { window.location.assign(p.data.url); } }`)}))
	legend := []any{"newly solved", "regained", "lost"}
	overlay := map[string]any{
		"xAxis": []any{map[string]any{"type": "category", "data": labels, "name": "checkpoint", "nameLocation": "middle", "nameGap": 30,
			"axisLabel": map[string]any{"interval": 0, "fontSize": 11}}},
		"yAxis": []any{map[string]any{"type": "value", "name": "problems (lost below 0)", "nameLocation": "middle", "nameGap": 42, "minInterval": 1,
			"axisLabel": map[string]any{"formatter": js(`function (v) { return String(Math.abs(v)); }`)}}},
		"series": []any{bar("newly solved", "#91cc75", fresh, "inside"), bar("regained", "#3ba272", regained, "top"), bar("lost", "#ee6666", lost, "bottom")},
		"grid":   map[string]any{"left": 64, "right": 28, "top": 52, "bottom": 64},
		"legend": bottomLegend(legend),
		"tooltip": map[string]any{"trigger": "axis", "axisPointer": map[string]any{"type": "shadow"},
			"valueFormatter": js(`function (v) { return String(Math.abs(v)) + ' problems'; }`)},
	}
	if err := setup(&c.BaseConfiguration, fullID, in.Title, in.Options, 320, overlay); err != nil {
		return Snippet{}, err
	}
	return finish(fullID, c)
}

package charts

import (
	"strings"
	"testing"
)

// Each point is [tokens per problem, pass@k in percent, k] on a log₂ token axis; the
// tooltip names k and the tokens, and the axis writes tokens short.
func TestCostOption(t *testing.T) {
	base := CostSeries{Name: "base", Ks: []int{1, 2, 4}, Tokens: []float64{406.6667, 813.3333, 1626.6667}, Values: []float64{.5, .6667, .8}}
	rl := CostSeries{Name: "rl", Ks: []int{1, 2, 4}, Tokens: []float64{1200, 2400, 4800}, Values: []float64{.7, .75, .78}, Color: 3}
	s, err := Cost("c5", CostInput{Title: "pass@k against tokens", Series: []CostSeries{base, rl}})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "cost_c5" {
		t.Errorf("ID = %q", s.ID)
	}
	o := option(t, s)
	series := o["series"].([]any)
	if len(series) != 2 {
		t.Fatalf("%d series, want 2", len(series))
	}
	if got := dig(t, series, 0, "data", 0); !floatsEqual(got, 406.67, 50, 1) {
		t.Errorf("base data[0] = %v, want [406.67 50 1]", got)
	}
	if got := dig(t, series, 1, "data", 2); !floatsEqual(got, 4800, 78, 4) {
		t.Errorf("rl data[2] = %v, want [4800 78 4]", got)
	}
	// Colour 3 is the palette's third: the model keeps its colour of the other charts.
	if dig(t, series, 1, "color") != palette[2] || dig(t, series, 0, "color") != palette[0] {
		t.Errorf("colours %v, %v", dig(t, series, 0, "color"), dig(t, series, 1, "color"))
	}
	x := dig(t, o, "xAxis", 0).(map[string]any)
	if x["type"] != "log" || x["logBase"] != 2.0 || x["name"] != "completion tokens per problem" {
		t.Errorf("x axis = %v, want log base 2 of tokens", x)
	}
	if y := dig(t, o, "yAxis", 0).(map[string]any); y["min"] != 40.0 || y["max"] != 100.0 || y["name"] != "pass@k (%)" {
		t.Errorf("y axis %v", y)
	}
	if legend := dig(t, o, "legend", "data").([]any); !stringsEqual(legend, "base", "rl") {
		t.Errorf("legend %v", legend)
	}
	html := string(s.HTML)
	for _, want := range []string{`at k = ' + v[2]`, `' tokens per problem'`, `esc(p.seriesName)`, `toPrecision(2) + 'k'`} {
		if !strings.Contains(html, want) {
			t.Errorf("script lacks %s", want)
		}
	}
}

// The extrapolated part (past k = 2) is a dashed second series of the same name from the
// token figure of k = 2 on.
func TestCostDashedFrom(t *testing.T) {
	s, err := Cost("p", CostInput{Series: []CostSeries{{Name: "m", Ks: []int{1, 2, 4, 8}, Tokens: []float64{100, 200, 400, 800},
		Values: []float64{.2, .3, .35, .4}, DashedFrom: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	o := option(t, s)
	if n := len(dig(t, o, "series", 0, "data").([]any)); n != 2 {
		t.Errorf("solid part has %d points, want 2", n)
	}
	if d := dig(t, o, "series", 1, "data").([]any); len(d) != 3 || !floatsEqual(d[0], 200, 30, 2) || dig(t, o, "series", 1, "lineStyle", "type") != "dashed" {
		t.Errorf("dashed part %v", d)
	}
}

func TestCostErrors(t *testing.T) {
	ok := CostSeries{Name: "m", Ks: []int{1, 2}, Tokens: []float64{10, 20}, Values: []float64{.1, .2}}
	cases := map[string]CostInput{
		"no series":      {},
		"lengths":        {Series: []CostSeries{{Name: "m", Ks: []int{1, 2}, Tokens: []float64{10}, Values: []float64{.1, .2}}}},
		"k zero":         {Series: []CostSeries{{Name: "m", Ks: []int{0, 2}, Tokens: []float64{10, 20}, Values: []float64{.1, .2}}}},
		"k not rising":   {Series: []CostSeries{{Name: "m", Ks: []int{2, 2}, Tokens: []float64{10, 20}, Values: []float64{.1, .2}}}},
		"zero tokens":    {Series: []CostSeries{{Name: "m", Ks: []int{1, 2}, Tokens: []float64{0, 20}, Values: []float64{.1, .2}}}},
		"tokens falling": {Series: []CostSeries{{Name: "m", Ks: []int{1, 2}, Tokens: []float64{30, 20}, Values: []float64{.1, .2}}}},
		"value > 1":      {Series: []CostSeries{{Name: "m", Ks: []int{1, 2}, Tokens: []float64{10, 20}, Values: []float64{.1, 1.2}}}},
		"no name":        {Series: []CostSeries{{Ks: ok.Ks, Tokens: ok.Tokens, Values: ok.Values}}},
	}
	for name, in := range cases {
		if _, err := Cost("p", in); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Cost("", CostInput{Series: []CostSeries{ok}}); err == nil {
		t.Error("empty id prefix: no error")
	}
}

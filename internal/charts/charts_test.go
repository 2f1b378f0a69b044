package charts

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
)

// option decodes a snippet's Option and checks what every chart shares.
func option(t *testing.T, s Snippet) map[string]any {
	t.Helper()
	var o map[string]any
	if err := json.Unmarshal(s.Option, &o); err != nil {
		t.Fatalf("Option is not JSON: %v\n%s", err, s.Option)
	}
	if o["animation"] != false {
		t.Errorf("animation = %v, want false", o["animation"])
	}
	save := dig(t, o, "toolbox", "feature", "saveAsImage").(map[string]any)
	if save["show"] != true || save["type"] != "png" || save["pixelRatio"] != 2.0 {
		t.Errorf("saveAsImage = %v", save)
	}
	html := string(s.HTML)
	if !strings.Contains(html, `id="`+s.ID+`"`) || !strings.Contains(html, "width:100%;") {
		t.Errorf("HTML lacks the div %q at 100%% width:\n%.300s", s.ID, html)
	}
	if !strings.HasPrefix(html[strings.Index(html, "<script"):], "<script>\n{") || !strings.HasSuffix(html, "}\n</script>") {
		t.Errorf("script is not block-scoped:\n%s", html)
	}
	return o
}

// dig follows map keys and, for arrays, integer indices.
func dig(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: not an object: %v", p, v)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at %v: not an array long enough: %v", p, v)
			}
			v = a[k]
		}
	}
	return v
}

func powersOf2(max int) []int {
	var ks []int
	for k := 1; k <= max; k *= 2 {
		ks = append(ks, k)
	}
	return ks
}

func TestCrossoverOption(t *testing.T) {
	ks := powersOf2(128) // 8 points
	base := CurveSeries{Name: "base", Ks: ks,
		Values: []float64{.6139, .70, .78, .84, .89, .92, .945, .962},
		Lo:     []float64{.60, .69, .77, .83, .88, .91, .93, .95},
		Hi:     []float64{.63, .71, .79, .85, .90, .93, .955, .97}}
	rl := CurveSeries{Name: "rl", Ks: ks, Values: []float64{.7793, .82, .85, .87, .89, .905, .92, .93}}
	s, err := Crossover("cmp1", CrossoverInput{Title: "MATH500", Series: []CurveSeries{base, rl},
		CrossoverK: 16, CrossoverLabel: "k* ≈ 16"})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "crossover_cmp1" {
		t.Errorf("ID = %q", s.ID)
	}
	o := option(t, s)
	series := o["series"].([]any)
	if len(series) != 4 { // base, its two band series, rl
		t.Fatalf("%d series, want 4", len(series))
	}
	wantIDs := []string{"curve0", "band_lo0", "band_width0", "curve1"}
	for i, id := range wantIDs {
		if got := dig(t, series, i, "id"); got != id {
			t.Errorf("series %d id = %v, want %s", i, got, id)
		}
	}
	// Values in percent, lower and upper bound carried on the main line for the tooltip.
	if got := dig(t, series, 0, "data", 0); !floatsEqual(got, 1, 61.39, 60, 63) {
		t.Errorf("base data[0] = %v, want [1 61.39 60 63]", got)
	}
	if got := dig(t, series, 3, "data", 7); !floatsEqual(got, 128, 93) {
		t.Errorf("rl data[7] = %v, want [128 93]", got)
	}
	// The band: lower bound, then width, stacked on each other.
	if got := dig(t, series, 2, "data", 7); !floatsEqual(got, 128, 2) {
		t.Errorf("band width at k=128 = %v, want [128 2]", got)
	}
	for _, i := range []int{1, 2} {
		if dig(t, series, i, "stack") != "band0" || dig(t, series, i, "stackStrategy") != "all" || dig(t, series, i, "name") != BandsLegend {
			t.Errorf("band series %d: %v", i, series[i])
		}
	}
	if dig(t, series, 2, "areaStyle", "opacity") == nil {
		t.Error("band width series has no area")
	}
	x := dig(t, o, "xAxis", 0).(map[string]any)
	if x["type"] != "log" || x["logBase"] != 2.0 || x["min"] != 1.0 || x["max"] != 128.0 {
		t.Errorf("x axis = %v, want log base 2 from 1 to 128", x)
	}
	y := dig(t, o, "yAxis", 0).(map[string]any)
	if y["min"] != 50.0 || y["max"] != 100.0 {
		t.Errorf("y axis %v–%v, want 50–100 (lowest value 60%%, less 1, rounded down to 10)", y["min"], y["max"])
	}
	ml := dig(t, series, 0, "markLine", "data", 0).(map[string]any)
	if ml["xAxis"] != 16.0 || ml["name"] != "k* ≈ 16" {
		t.Errorf("crossover mark line = %v", ml)
	}
	if dig(t, o, "tooltip", "trigger") != "axis" {
		t.Error("tooltip is not by axis")
	}
	if _, ok := dig(t, o, "tooltip").(map[string]any)["formatter"]; ok {
		t.Error("Option still holds the JavaScript formatter")
	}
	// The models, then the one entry that toggles every band: on with two curves.
	legend := dig(t, o, "legend", "data").([]any)
	if len(legend) != 3 || !stringsEqual(legend[:2], "base", "rl") || dig(t, legend, 2, "name") != BandsLegend {
		t.Errorf("legend = %v", legend)
	}
	if dig(t, o, "legend", "type") != "plain" || dig(t, o, "legend", "selected", BandsLegend) != true {
		t.Errorf("legend %v: want plain, bands selected", dig(t, o, "legend"))
	}
	// The script holds the same option with the formatter as code.
	html := string(s.HTML)
	for _, want := range []string{`"logBase":2`, `"tooltip":{"axisPointer":{"type":"line"},"formatter":function (ps)`,
		`echarts.format.encodeHTML`, `renderer: "canvas"`, `.resize()`} {
		if !strings.Contains(html, want) {
			t.Errorf("script lacks %s", want)
		}
	}
}

func TestCrossoverWithoutK(t *testing.T) {
	s, err := Crossover("p", CrossoverInput{Series: []CurveSeries{{Name: "m", Ks: []int{1, 2, 4}, Values: []float64{.2, .3, .35}}},
		Options: Options{Renderer: SVG, Height: 300}})
	if err != nil {
		t.Fatal(err)
	}
	o := option(t, s)
	if _, ok := dig(t, o, "series", 0).(map[string]any)["markLine"]; ok {
		t.Error("mark line drawn without a crossover k")
	}
	if y := dig(t, o, "yAxis", 0, "min"); y != 10.0 {
		t.Errorf("y min = %v, want 10 (the lowest value 20 is not drawn on the axis)", y)
	}
	if h := string(s.HTML); !strings.Contains(h, `renderer: "svg"`) || !strings.Contains(h, "height:300px") {
		t.Errorf("renderer or height not applied:\n%.400s", h)
	}
}

func TestDiffCurveOption(t *testing.T) {
	s, err := DiffCurve("d", DiffInput{Series: []CurveSeries{{Name: "rl − base", Ks: []int{1, 2, 4, 8},
		Values: []float64{.16, .08, .01, -.03}, Lo: []float64{.14, .06, -.01, -.05}, Hi: []float64{.18, .10, .03, -.01}}}})
	if err != nil {
		t.Fatal(err)
	}
	o := option(t, s)
	series := o["series"].([]any)
	if len(series) != 3 {
		t.Fatalf("%d series, want 3", len(series))
	}
	if got := dig(t, series, 0, "data", 3); !floatsEqual(got, 8, -3, -5, -1) {
		t.Errorf("data[3] = %v, want [8 -3 -5 -1] (percentage points)", got)
	}
	if got := dig(t, series, 1, "data", 3); !floatsEqual(got, 8, -5) {
		t.Errorf("band lower = %v", got)
	}
	if got := dig(t, series, 0, "markLine", "data", 0, "yAxis"); got != 0.0 {
		t.Errorf("zero line at %v", got)
	}
	if dig(t, o, "xAxis", 0, "logBase") != 2.0 {
		t.Error("x axis is not log base 2")
	}
}

func TestTrajectoryAndCoverOptions(t *testing.T) {
	s, err := Trajectory("t", TrajectoryInput{Steps: []int{0, 50, 100},
		Lines: []TrajectoryLine{{Name: "pass@1", Values: []float64{.5, .6, .7}, Lo: []float64{.45, .55, .65}, Hi: []float64{.55, .65, .75}},
			{Name: "pass@256", Values: []float64{.9, .88, .86}}}})
	if err != nil {
		t.Fatal(err)
	}
	o := option(t, s)
	if n := len(o["series"].([]any)); n != 4 {
		t.Errorf("trajectory: %d series, want 4 (2 lines + 2 band)", n)
	}
	if x := dig(t, o, "xAxis", 0).(map[string]any); x["type"] != "value" || x["max"] != 100.0 {
		t.Errorf("trajectory x axis = %v", x)
	}
	if got := dig(t, o, "series", 3, "data", 2); !floatsEqual(got, 100, 86) {
		t.Errorf("pass@256 at step 100 = %v", got)
	}

	s, err = Cover("c", CoverInput{Series: []CoverSeries{{Name: "base", Taus: []float64{0, .5, 1}, Values: []float64{1, .6, .1}},
		{Name: "rl", Taus: []float64{0, .5, 1}, Values: []float64{1, .8, .5}}}})
	if err != nil {
		t.Fatal(err)
	}
	o = option(t, s)
	if n := len(o["series"].([]any)); n != 2 {
		t.Errorf("cover: %d series, want 2", n)
	}
	if got := dig(t, o, "series", 1, "data", 1); !floatsEqual(got, .5, 80) {
		t.Errorf("cover rl at τ=0.5 = %v", got)
	}
	if x := dig(t, o, "xAxis", 0).(map[string]any); x["min"] != 0.0 || x["max"] != 1.0 {
		t.Errorf("cover x axis = %v", x)
	}
}

func TestHistogramOption(t *testing.T) {
	labels := []string{"0", "(0,0.5]", "(0.5,1)", "1"}
	s, err := Histogram("h", HistogramInput{Labels: labels, Series: []HistSeries{
		{Name: "base", Counts: []int{16, 100, 200, 184}}, {Name: "rl", Counts: []int{35, 40, 100, 325}}}})
	if err != nil {
		t.Fatal(err)
	}
	o := option(t, s)
	series := o["series"].([]any)
	if len(series) != 2 || dig(t, series, 0, "type") != "bar" {
		t.Fatalf("series = %v", series)
	}
	if got := dig(t, series, 1, "data", 3, "value"); got != 325.0 {
		t.Errorf("rl count in bin 1 = %v, want 325", got)
	}
	if got := dig(t, o, "xAxis", 0, "data"); !stringsEqual(got, labels...) {
		t.Errorf("x labels = %v", got)
	}
}

func TestUpSetOption(t *testing.T) {
	s, err := UpSet("u", UpSetInput{Models: []string{"a", "b", "c", "d"}, Sets: []UpSetBar{
		{Members: []int{0}, Count: 5}, {Members: []int{0, 1, 2, 3}, Count: 400}, {Members: []int{3, 1}, Count: 7}, {Count: 16}}})
	if err != nil {
		t.Fatal(err)
	}
	o := option(t, s)
	series := o["series"].([]any)
	if len(series) != 4 {
		t.Fatalf("%d series, want bars, member dots, other dots, links", len(series))
	}
	var counts []float64
	for _, d := range dig(t, series, 0, "data").([]any) {
		counts = append(counts, d.(map[string]any)["value"].(float64))
	}
	if !floatsEqual(toAny(counts), 400, 16, 7, 5) {
		t.Errorf("bars = %v, want sorted 400 16 7 5", counts)
	}
	if got := dig(t, o, "xAxis", 0, "data"); !stringsEqual(got, "a + b + c + d", "none of the models", "d + b", "a") {
		t.Errorf("categories = %v", got)
	}
	members, others := dig(t, series, 1, "data").([]any), dig(t, series, 2, "data").([]any)
	if len(members) != 4+0+2+1 || len(members)+len(others) != 16 {
		t.Errorf("%d member and %d other dots, want 7 and 9", len(members), len(others))
	}
	if got := dig(t, series, 3, "data"); len(got.([]any)) != 2 || !floatsEqual(dig(t, got, 1), 2, 1, 3) {
		t.Errorf("links = %v, want [[0 0 3] [2 1 3]]", got)
	}
	if got := dig(t, o, "yAxis", 1, "data"); !stringsEqual(got, "a (405)", "b (407)", "c (400)", "d (407)") {
		t.Errorf("row labels = %v", got)
	}
}

func TestVennOption(t *testing.T) {
	s, err := Venn("pair2", VennInput{A: "base", B: "rl", Both: 462, AOnly: 19, BOnly: 3, Neither: 16, Total: 500,
		RegionURL: "/c/7/problems?pair=2&region={region}"})
	if err != nil {
		t.Fatal(err)
	}
	o := option(t, s)
	els := dig(t, o, "graphic", 0, "children").([]any)
	byType := map[string][]map[string]any{}
	for _, e := range els {
		m := e.(map[string]any)
		byType[m["type"].(string)] = append(byType[m["type"].(string)], m)
	}
	if len(byType["rect"]) != 1 || len(byType["polygon"]) != 1 || len(byType["circle"]) != 4 {
		t.Fatalf("elements: %d rect, %d polygon, %d circle; want 1, 1, 4 (2 fills + 2 outlines)",
			len(byType["rect"]), len(byType["polygon"]), len(byType["circle"]))
	}
	info := map[string]bool{}
	texts := map[string]bool{}
	for _, e := range els {
		m := e.(map[string]any)
		if u, ok := m["info"].(string); ok {
			info[u] = true
		}
		if m["type"] == "text" {
			texts[dig(t, m, "style", "text").(string)] = true
		}
	}
	for _, r := range []string{"both", "a-only", "b-only", "neither"} {
		if !info["/c/7/problems?pair=2&region="+r] {
			t.Errorf("no element links to region %s (links %v)", r, info)
		}
	}
	for _, want := range []string{"462", "19", "3", "base", "rl", "481 solved", "465 solved", "neither: 16 of 500 problems"} {
		if !texts[want] {
			t.Errorf("no text %q among %v", want, texts)
		}
	}
	// Geometry as drawn: fills' radii ratio and the lens polygon's area.
	ra := dig(t, byType["circle"][0], "shape", "r").(float64)
	rb := dig(t, byType["circle"][1], "shape", "r").(float64)
	if got, want := ra*ra/(rb*rb), 481.0/465.0; math.Abs(got/want-1) > 0.001 {
		t.Errorf("area ratio A/B = %.4f, want %.4f", got, want)
	}
	var pts [][2]float64
	for _, p := range dig(t, byType["polygon"][0], "shape", "points").([]any) {
		pts = append(pts, [2]float64{p.([]any)[0].(float64), p.([]any)[1].(float64)})
	}
	if got, want := polygonArea(pts)/(math.Pi*ra*ra), 462.0/481.0; math.Abs(got/want-1) > 0.01 {
		t.Errorf("drawn lens / circle A = %.4f, want %.4f within 1%%", got, want)
	}
	html := string(s.HTML)
	if !strings.Contains(html, `.on("click", function (p) { if (p.componentType === 'graphic' && typeof p.info === 'string') { window.location.assign(p.info); } })`) {
		t.Errorf("click handler missing:\n%s", html)
	}
	// & in the URL is escaped for the script and decodes back.
	if !strings.Contains(html, `pair=2\u0026region=both`) {
		t.Error("& in the region URL is not escaped in the script")
	}
}

func TestVennWithoutLinks(t *testing.T) {
	s, err := Venn("p", VennInput{A: "a", B: "b", Both: 1, AOnly: 1, BOnly: 1, Neither: 1})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(s.HTML), `.on("click"`) || strings.Contains(string(s.Option), `"info"`) {
		t.Error("links present although RegionURL is empty")
	}
}

func TestEscaping(t *testing.T) {
	const evil = `</script><script>alert(1)</script><!--`
	ks := []int{1, 2}
	build := map[string]func() (Snippet, error){
		"crossover": func() (Snippet, error) {
			return Crossover(evil, CrossoverInput{Title: evil, CrossoverK: 2, CrossoverLabel: evil,
				Series: []CurveSeries{{Name: evil, Ks: ks, Values: []float64{.1, .2}}}})
		},
		"venn": func() (Snippet, error) {
			return Venn(evil, VennInput{Title: evil, A: evil, B: evil, Both: 3, AOnly: 2, BOnly: 1, RegionURL: "/x?m=" + evil + "&r={region}"})
		},
		"histogram": func() (Snippet, error) {
			return Histogram(evil, HistogramInput{Title: evil, Labels: []string{evil}, Series: []HistSeries{{Name: evil, Counts: []int{1}}}})
		},
		"upset": func() (Snippet, error) {
			return UpSet(evil, UpSetInput{Title: evil, Models: []string{evil, "b"}, Sets: []UpSetBar{{Members: []int{0, 1}, Count: 2}}})
		},
		"trajectory": func() (Snippet, error) {
			return Trajectory(evil, TrajectoryInput{Title: evil, Steps: []int{0, 1}, Lines: []TrajectoryLine{{Name: evil, Values: []float64{.1, .2}}}})
		},
	}
	idPat := regexp.MustCompile(`^[a-zA-Z0-9_]+$`)
	for name, f := range build {
		s, err := f()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !idPat.MatchString(s.ID) {
			t.Errorf("%s: id %q has unsafe characters", name, s.ID)
		}
		h := strings.ToLower(string(s.HTML))
		if strings.Count(h, "<script") != 1 || strings.Count(h, "</script") != 1 || strings.Contains(h, "<!--") {
			t.Errorf("%s: the model name broke out of the script:\n%s", name, s.HTML)
		}
		if !strings.Contains(h, `\u003c/script\u003e\u003cscript\u003ealert(1)`) {
			t.Errorf("%s: escaped name not found in the script", name)
		}
		// The name survives the escaping unchanged.
		if !strings.Contains(string(s.Option), `\u003c/script\u003e`) {
			t.Errorf("%s: Option does not escape <", name)
		}
		var o map[string]any
		if err := json.Unmarshal(s.Option, &o); err != nil {
			t.Fatal(err)
		}
		if dig(t, o, "title", "text") != evil {
			t.Errorf("%s: title decodes to %q", name, dig(t, o, "title", "text"))
		}
	}
}

func TestChartID(t *testing.T) {
	a, _ := chartID("venn", "a-b")
	b, _ := chartID("venn", "a_b")
	c, _ := chartID("venn", "a.b")
	if a == b || a == c || b != "venn_a_b" {
		t.Errorf("ids %q %q %q: want distinct, and a_b kept as is", a, b, c)
	}
	if _, err := chartID("venn", ""); err == nil {
		t.Error("empty prefix accepted")
	}
}

func TestInputErrors(t *testing.T) {
	good := CurveSeries{Name: "m", Ks: []int{1, 2}, Values: []float64{.1, .2}}
	cases := map[string]func() (Snippet, error){
		"no series": func() (Snippet, error) { return Crossover("x", CrossoverInput{}) },
		"k not increasing": func() (Snippet, error) {
			return Crossover("x", CrossoverInput{Series: []CurveSeries{{Name: "m", Ks: []int{2, 1}, Values: []float64{.1, .2}}}})
		},
		"k zero": func() (Snippet, error) {
			return Crossover("x", CrossoverInput{Series: []CurveSeries{{Name: "m", Ks: []int{0, 1}, Values: []float64{.1, .2}}}})
		},
		"value > 1": func() (Snippet, error) {
			return Crossover("x", CrossoverInput{Series: []CurveSeries{{Name: "m", Ks: []int{1, 2}, Values: []float64{.1, 1.2}}}})
		},
		"NaN": func() (Snippet, error) {
			return Crossover("x", CrossoverInput{Series: []CurveSeries{{Name: "m", Ks: []int{1, 2}, Values: []float64{.1, math.NaN()}}}})
		},
		"half band": func() (Snippet, error) {
			return Crossover("x", CrossoverInput{Series: []CurveSeries{{Name: "m", Ks: []int{1, 2}, Values: []float64{.1, .2}, Lo: []float64{0, 0}}}})
		},
		"crossover beyond k": func() (Snippet, error) {
			return Crossover("x", CrossoverInput{Series: []CurveSeries{good}, CrossoverK: 3})
		},
		"bad renderer": func() (Snippet, error) {
			return Crossover("x", CrossoverInput{Series: []CurveSeries{good}, Options: Options{Renderer: "webgl"}})
		},
		"empty id":      func() (Snippet, error) { return Crossover("", CrossoverInput{Series: []CurveSeries{good}}) },
		"venn total":    func() (Snippet, error) { return Venn("x", VennInput{A: "a", B: "b", Both: 1, Total: 5}) },
		"venn negative": func() (Snippet, error) { return Venn("x", VennInput{A: "a", B: "b", Both: -1}) },
		"venn js url": func() (Snippet, error) {
			return Venn("x", VennInput{A: "a", B: "b", Both: 1, RegionURL: "javascript:alert(1)//{region}"})
		},
		"venn no region": func() (Snippet, error) { return Venn("x", VennInput{A: "a", B: "b", Both: 1, RegionURL: "/p"}) },
		"hist lengths": func() (Snippet, error) {
			return Histogram("x", HistogramInput{Labels: []string{"0"}, Series: []HistSeries{{Name: "m", Counts: []int{1, 2}}}})
		},
		"upset range": func() (Snippet, error) {
			return UpSet("x", UpSetInput{Models: []string{"a"}, Sets: []UpSetBar{{Members: []int{1}, Count: 1}}})
		},
		"upset twice": func() (Snippet, error) {
			return UpSet("x", UpSetInput{Models: []string{"a", "b"}, Sets: []UpSetBar{{Members: []int{0, 1}, Count: 1}, {Members: []int{1, 0}, Count: 2}}})
		},
		"cover tau": func() (Snippet, error) {
			return Cover("x", CoverInput{Series: []CoverSeries{{Name: "m", Taus: []float64{0, 1.5}, Values: []float64{1, 0}}}})
		},
		"traj steps": func() (Snippet, error) {
			return Trajectory("x", TrajectoryInput{Steps: []int{0, 10}, Lines: []TrajectoryLine{{Name: "p", Values: []float64{.1}}}})
		},
	}
	for name, f := range cases {
		if _, err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func floatsEqual(v any, want ...float64) bool {
	a, ok := v.([]any)
	if !ok || len(a) != len(want) {
		return false
	}
	for i, w := range want {
		f, ok := a[i].(float64)
		if !ok || math.Abs(f-w) > 1e-9 {
			return false
		}
	}
	return true
}

func stringsEqual(v any, want ...string) bool {
	a, ok := v.([]any)
	if !ok || len(a) != len(want) {
		return false
	}
	for i, w := range want {
		if a[i] != w {
			return false
		}
	}
	return true
}

func toAny(fs []float64) []any {
	out := make([]any, len(fs))
	for i, f := range fs {
		out[i] = f
	}
	return out
}

// With six and eleven models the legend is plain (every name shown, never a "1/2" page), the
// grid leaves the estimated legend rows below the plot, the chart grows by the rows past the
// first, and the bands start hidden behind their legend entry.
func TestManyCurvesLegend(t *testing.T) {
	ks := []int{1, 2, 4, 8}
	mk := func(n int) CrossoverInput {
		var in CrossoverInput
		for i := range n {
			v := []float64{.2, .3, .4, .5}
			in.Series = append(in.Series, CurveSeries{Name: fmt.Sprintf("checkpoint-%d (step %d00)", i, i), Ks: ks,
				Values: v, Lo: []float64{.1, .2, .3, .4}, Hi: []float64{.3, .4, .5, .6}})
		}
		return in
	}
	for _, n := range []int{2, 6, 11} {
		s, err := Crossover("many", mk(n))
		if err != nil {
			t.Fatal(err)
		}
		o := option(t, s)
		lg := dig(t, o, "legend").(map[string]any)
		data := lg["data"].([]any)
		if lg["type"] != "plain" || len(data) != n+1 {
			t.Errorf("%d models: legend type %v with %d entries, want plain with %d", n, lg["type"], len(data), n+1)
		}
		for i := range n {
			if data[i] != fmt.Sprintf("checkpoint-%d (step %d00)", i, i) {
				t.Errorf("%d models: legend entry %d = %v", n, i, data[i])
			}
		}
		if on := dig(t, lg, "selected", BandsLegend); on != (n <= 2) {
			t.Errorf("%d models: bands shown at first = %v, want %v", n, on, n <= 2)
		}
		rows := legendRows(data, legendEstimateWidth)
		if n >= 6 && rows < 2 {
			t.Errorf("%d models: estimated %d legend rows", n, rows)
		}
		if got := dig(t, o, "grid", "bottom"); got != float64(54+rows*legendRowPx) {
			t.Errorf("%d models: grid bottom %v, want %d (axis) + %d rows", n, got, 54, rows)
		}
		if want := fmt.Sprintf("height:%dpx", 420+(rows-1)*legendRowPx); !strings.Contains(string(s.HTML), want) {
			t.Errorf("%d models: chart lacks %s", n, want)
		}
	}
}

// With more than two models each pair's k* line hangs on its model's
// series, labelled with the model; a line of a series that is not there is
// an error.
func TestCrossoverLinePerPair(t *testing.T) {
	ks := powersOf2(16)
	mk := func(name string, v ...float64) CurveSeries { return CurveSeries{Name: name, Ks: ks, Values: v} }
	in := CrossoverInput{Series: []CurveSeries{mk("SFT", .5, .6, .7, .8, .9), mk("ckpt-100", .6, .65, .7, .75, .8), mk("ckpt-300", .6, .7, .75, .78, .85)},
		Crossovers: []CrossoverLine{{K: 3.2, Label: "k* ≈ 3.2 ckpt-100", Series: 1}, {K: 5, Label: "k* ≈ 5 ckpt-300", Series: 2}}}
	s, err := Crossover("pairs", in)
	if err != nil {
		t.Fatal(err)
	}
	series := option(t, s)["series"].([]any)
	byName := map[string]map[string]any{}
	for _, x := range series {
		m := x.(map[string]any)
		if id, _ := m["id"].(string); strings.HasPrefix(id, "curve") {
			byName[m["name"].(string)] = m
		}
	}
	if _, ok := byName["SFT"]["markLine"]; ok {
		t.Error("the base model's series carries a k* line")
	}
	for name, want := range map[string][2]any{"ckpt-100": {3.2, "k* ≈ 3.2 ckpt-100"}, "ckpt-300": {5.0, "k* ≈ 5 ckpt-300"}} {
		ml, ok := byName[name]["markLine"].(map[string]any)
		if !ok {
			t.Errorf("%s has no k* line", name)
			continue
		}
		d := ml["data"].([]any)[0].(map[string]any)
		if d["xAxis"] != want[0] || d["name"] != want[1] {
			t.Errorf("%s k* line %v, want %v", name, d, want)
		}
	}
	in.Crossovers = []CrossoverLine{{K: 2, Series: 3}}
	if _, err := Crossover("pairs", in); err == nil {
		t.Error("a k* line on series 3 of 3 was accepted")
	}
}

// An extrapolated part is a second, dashed series of the same name that shares the last
// sampled point, so one legend entry shows and hides both.
func TestCrossoverDashedFrom(t *testing.T) {
	s, err := Crossover("p", CrossoverInput{Series: []CurveSeries{{Name: "m", Ks: []int{1, 2, 4, 8, 16},
		Values: []float64{.2, .3, .35, .4, .45}, DashedFrom: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	o := option(t, s)
	solid := dig(t, o, "series", 0).(map[string]any)
	dashed := dig(t, o, "series", 1).(map[string]any)
	if dashed["id"] != "curvex0" || dashed["name"] != "m" || solid["name"] != "m" {
		t.Fatalf("series %v and %v", solid["id"], dashed["id"])
	}
	if n := len(solid["data"].([]any)); n != 3 {
		t.Errorf("solid part has %d points, want 3 (k = 1, 2, 4)", n)
	}
	if d := dashed["data"].([]any); len(d) != 3 || d[0].([]any)[0] != 4.0 {
		t.Errorf("dashed part %v, want k = 4, 8, 16", d)
	}
	if dig(t, dashed, "lineStyle", "type") != "dashed" {
		t.Errorf("extrapolated part not dashed: %v", dashed["lineStyle"])
	}
	if legend := dig(t, o, "legend", "data").([]any); len(legend) != 1 {
		t.Errorf("legend %v, want one entry", legend)
	}
}

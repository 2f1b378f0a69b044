package web_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/benchdata"
	"github.com/reach-lab/reach/internal/jobs"
)

// One colour per model on every chart of a comparison, read from the
// charts' options: the pass@k curves, the histogram, Cover@τ, the
// difference curves (in the other model's colour), maj@k (base maj@k once
// had the RL model's colour) and the Venn diagram of the second pair.
func TestBrowserModelColours(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 90*time.Second)
	b.signIn(t, a)
	ctx := context.Background()
	id, _, err := benchdata.Create(ctx, a.st, benchdata.Spec{Models: 3, N: 8, Problems: 40, Texts: true, Seed: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// maj@k needs extracted answers: the boxed one of each completion.
	if _, err := a.st.Pool().Exec(ctx, `UPDATE samples SET extracted = COALESCE((regexp_match(completion, '\\boxed\{(.*)\}'))[1], '')`); err != nil {
		t.Fatal(err)
	}
	if err := jobs.ComputeStats(ctx, a.st, id, 0); err != nil {
		t.Fatal(err)
	}
	c, err := a.st.GetComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var models []string
	for _, r := range c.Runs {
		models = append(models, r.ModelName)
	}
	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
	b.waitReport(t)
	b.waitChart(t, "#crossover-chart")
	type seriesColour struct {
		Chart  string `json:"chart"`
		Name   string `json:"name"`
		Colour string `json:"colour"`
	}
	got := eval[[]seriesColour](t, b, `(() => {
		const out = [];
		document.querySelectorAll("[_echarts_instance_]").forEach(div => {
			const chart = (div.closest("section[id], div[id]") || {}).id || "";
			const o = echarts.getInstanceByDom(div).getOption();
			(o.series || []).forEach(s => {
				const c = s.color || (s.lineStyle && s.lineStyle.color) || (s.itemStyle && s.itemStyle.color) || "";
				if (s.name && typeof c === "string") out.push({chart, name: s.name, colour: c});
			});
		});
		return out;
	})()`)
	owner := func(name string) string {
		if i := strings.Index(name, " − "); i >= 0 { // a difference curve: the other model's
			name = name[:i]
		}
		for _, m := range models {
			if name == m || strings.HasPrefix(name, m+" ") {
				return m
			}
		}
		return ""
	}
	colours := map[string]map[string][]string{} // model → colour → charts
	var charts []string
	for _, s := range got {
		m := owner(s.Name)
		if m == "" {
			continue
		}
		if colours[m] == nil {
			colours[m] = map[string][]string{}
		}
		colours[m][s.Colour] = append(colours[m][s.Colour], s.Chart+": "+s.Name)
		if !slices.Contains(charts, s.Chart) {
			charts = append(charts, s.Chart)
		}
	}
	for _, want := range []string{"crossover_c%d", "crossover_c%d_maj", "cover_c%d", "diff_c%d", "histogram_c%d"} {
		if want = fmt.Sprintf(want, id); !slices.Contains(charts, want) {
			t.Errorf("no model series read from a %s chart (read: %q)", want, charts)
		}
	}
	seen := map[string]string{}
	for _, m := range models {
		if len(colours[m]) != 1 {
			t.Errorf("model %s has %d colours across the charts: %v", m, len(colours[m]), colours[m])
			continue
		}
		for col := range colours[m] {
			if other, ok := seen[col]; ok {
				t.Errorf("models %s and %s share the colour %s", other, m, col)
			}
			seen[col] = m
		}
	}
	// The Venn of base vs the third model draws that model in its colour.
	var third string
	for col, m := range seen {
		if m == models[2] {
			third = col
		}
	}
	venn := eval[string](t, b, `JSON.stringify(echarts.getInstanceByDom(document.querySelector("#venn-2 [_echarts_instance_]")).getOption())`)
	if third == "" || !strings.Contains(strings.ToLower(venn), strings.ToLower(third)) {
		t.Errorf("the Venn of %s vs %s does not use %s's colour %q", models[0], models[2], models[2], third)
	}
	b.checkConsole(t)
}

// A model keeps its colour across a collection: three comparisons whose
// models sit at different positions (the RL model is third in one, fourth
// in another) overlay one curve per model and comparison; each model has
// one colour, which is its colour on the first comparison's page, distinct
// models have distinct colours, and each comparison has its own line and
// marker. The table's swatches match, and the legend names every curve.
func TestBrowserCollectionColours(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 2*time.Minute)
	b.signIn(t, a)
	ctx := context.Background()
	var ids []int64
	for i, models := range []int{3, 4, 3} {
		id, _ := manyModels(t, a, models, uint64(20+i))
		// Distinct comparison names: benchdata names a comparison by its shape.
		if _, err := a.st.Pool().Exec(ctx, `UPDATE comparisons SET name = $1 WHERE id = $2`, fmt.Sprintf("run %d", i+1), id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	c, err := a.st.GetComparison(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	u, err := a.st.UserByEmail(ctx, "admin@reach.test")
	if err != nil {
		t.Fatal(err)
	}
	kid, err := a.st.CreateCollection(ctx, c.ProjectID, "three runs", u.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := a.st.AddToCollection(ctx, kid, id); err != nil {
			t.Fatal(err)
		}
	}

	// The first comparison's colours, from its crossover chart.
	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, ids[0]))
	b.waitReport(t)
	b.waitChart(t, "#crossover-chart")
	type curve struct {
		Name   string `json:"name"`
		Colour string `json:"colour"`
		Line   string `json:"line"`
		Symbol string `json:"symbol"`
	}
	curvesJS := func(sel string) string {
		return `(() => { const o = echarts.getInstanceByDom(document.querySelector("` + sel + ` [_echarts_instance_]")).getOption();
			return o.series.filter(s => /^curve/.test(s.id)).map(s => ({name: s.name, colour: s.color, line: s.lineStyle.type, symbol: s.symbol})); })()`
	}
	first := map[string]string{}
	for _, cv := range eval[[]curve](t, b, curvesJS("#crossover-chart")) {
		first[cv.Name] = cv.Colour
	}

	b.open(t, fmt.Sprintf("%s/collections/%d", a.url, kid))
	b.waitChart(t, "#overlay-chart")
	b.settle(t)
	b.screenshot(t, "collection-colours")
	got := eval[[]curve](t, b, curvesJS("#overlay-chart"))
	if len(got) != 10 {
		t.Fatalf("%d overlay curves, want 3 + 4 + 3: %v", len(got), got)
	}
	colourOf, modelOf, styleOf := map[string]string{}, map[string]string{}, map[string]string{}
	var names []string
	for _, cv := range got {
		names = append(names, cv.Name)
		run, model, ok := strings.Cut(cv.Name, " · ")
		if !ok {
			t.Fatalf("overlay curve %q is not named comparison · model", cv.Name)
		}
		if col, ok := colourOf[model]; ok && col != cv.Colour {
			t.Errorf("%s is %s in one comparison and %s in another", model, col, cv.Colour)
		}
		if m, ok := modelOf[cv.Colour]; ok && m != model {
			t.Errorf("%s and %s share the colour %s", m, model, cv.Colour)
		}
		colourOf[model], modelOf[cv.Colour] = cv.Colour, model
		if want, ok := first[model]; ok && want != cv.Colour {
			t.Errorf("%s is %s on the collection and %s on its comparison's page", cv.Name, cv.Colour, want)
		}
		style := cv.Line + " " + cv.Symbol
		if s, ok := styleOf[run]; ok && s != style {
			t.Errorf("%s: curves drawn %q and %q", run, s, style)
		}
		styleOf[run] = style
	}
	if len(styleOf) != 3 || styleOf["run 1"] == styleOf["run 2"] || styleOf["run 2"] == styleOf["run 3"] || styleOf["run 1"] == styleOf["run 3"] {
		t.Errorf("comparison styles %v, want three different", styleOf)
	}
	for _, cs := range b.chartLayouts(t) {
		for _, p := range cs.Layout.Problems(names) {
			t.Errorf("overlay: %s (%s)", p, cs.Layout.Describe())
		}
	}
	rows := eval[[][]string](t, b, `[...document.querySelectorAll("#collection-table tbody tr")].map(tr => [tr.cells[1].innerText.trim(),
		getComputedStyle(tr.cells[1].querySelector(".swatch")).backgroundColor])`)
	for _, r := range rows {
		if want := rgb(colourOf[r[0]]); r[1] != want {
			t.Errorf("table swatch of %s is %s, want %s", r[0], r[1], want)
		}
	}
	b.checkConsole(t)
}

// rgb writes a #rrggbb colour as getComputedStyle does.
func rgb(hex string) string {
	var r, g, b int
	if _, err := fmt.Sscanf(hex, "#%02x%02x%02x", &r, &g, &b); err != nil {
		return "invalid " + hex
	}
	return fmt.Sprintf("rgb(%d, %d, %d)", r, g, b)
}

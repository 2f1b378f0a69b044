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

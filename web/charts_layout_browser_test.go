package web_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/auth"
	"github.com/reach-lab/reach/internal/benchdata"
	"github.com/reach-lab/reach/internal/charts"
	"github.com/reach-lab/reach/internal/charts/chartstest"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
)

// manyModels makes a comparison of models models on 40 MATH500 problems
// (8 samples each) with its statistics (bands, breakdowns) computed, and
// returns it with its model names in order.
func manyModels(t *testing.T, a *app, models int, seed uint64) (int64, []string) {
	t.Helper()
	ctx := context.Background()
	id, _, err := benchdata.Create(ctx, a.st, benchdata.Spec{Models: models, N: 8, Problems: 40, Seed: seed}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.ComputeStats(ctx, a.st, id, 0); err != nil {
		t.Fatal(err)
	}
	c, err := a.st.GetComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range c.Runs {
		names = append(names, r.ModelName)
	}
	return id, names
}

// shareLink makes a link sharing every chart of comparison id and returns
// its URL.
func shareLink(t *testing.T, a *app, id int64) string {
	t.Helper()
	ctx := context.Background()
	u, err := a.st.UserByEmail(ctx, "admin@reach.test")
	if err != nil {
		t.Fatal(err)
	}
	token, hash, err := auth.NewToken(auth.PrefixShare)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.st.CreateShare(ctx, store.ShareLink{ComparisonID: id, CreatedBy: u.ID}, hash); err != nil {
		t.Fatal(err)
	}
	return a.url + "/s/" + token
}

// settle waits two animation frames: the charts fit their legends in the
// frame after a resize.
func (b *browser) settle(t *testing.T) {
	t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`,
		chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
}

// chartLayouts reads the layout of every chart on the page with the names
// of its series that have one of their own (not the bands), by chart id.
type pageChart struct {
	ID     string            `json:"id"`
	Names  []string          `json:"names"`
	Layout chartstest.Layout `json:"layout"`
}

func (b *browser) chartLayouts(t *testing.T) []pageChart {
	t.Helper()
	return eval[[]pageChart](t, b, `[...document.querySelectorAll("[_echarts_instance_]")].map(div => {
		const o = echarts.getInstanceByDom(div).getOption();
		const names = [];
		if (o.legend && o.legend[0] && o.legend[0].show !== false) (o.series || []).forEach(s => { if ((s.type === "line" || s.type === "bar") && s.name && s.name !== `+fmt.Sprintf("%q", charts.BandsLegend)+` && !names.includes(s.name)) names.push(s.name); });
		return {id: div.id, names: names, layout: (`+chartstest.LayoutJS+`)(div)};
	})`)
}

// screenshotOf saves the element sel, scrolled into the viewport, as
// name.png under $REACH_SCREENSHOTS. It crops a viewport capture: a capture
// beyond the viewport (chromedp.Screenshot) showed canvases from stale
// frames, drawn at another size than the chart's.
func (b *browser) screenshotOf(t *testing.T, sel, name string) {
	t.Helper()
	dir := os.Getenv("REACH_SCREENSHOTS")
	if dir == "" {
		return
	}
	r := eval[[]float64](t, b, fmt.Sprintf(`(() => { const el = document.querySelector(%q); el.scrollIntoView({block: "start"});
		const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, Math.min(r.bottom, innerHeight)]; })()`, sel))
	b.settle(t)
	shot, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok || len(r) != 4 {
		t.Fatalf("screenshot %s: cannot crop", name)
	}
	var out bytes.Buffer
	if err := png.Encode(&out, sub.SubImage(image.Rect(int(r[0]), int(r[1]), int(r[2]), int(r[3])))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Issue 14, charts that read right, with 6 and 11 models: on the
// comparison page every line and bar chart names every series in a plain
// legend (no "1/2" pages) inside the chart and clear of the plot, its
// axes and the save-image icon, and the PNG export holds that legend; the
// crossover's 95% bands start hidden behind their own legend entry and a
// hidden model takes its band with it. The share embed at 720 × 460 shows
// the whole chart, its legend and its image links without scrolling.
func TestBrowserManyModelCharts(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 3*time.Minute)
	b.signIn(t, a)
	for _, n := range []int{6, 11} {
		id, models := manyModels(t, a, n, uint64(n))
		b.do(t, "desktop size", chromedp.EmulateViewport(1280, 1000))
		b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
		b.waitReport(t)
		b.waitChart(t, "#crossover-chart")
		b.settle(t)
		var subjects int
		for _, c := range b.chartLayouts(t) {
			if strings.Contains(c.ID, "_g") {
				subjects++
			}
			if len(c.Names) > 0 && c.Layout.LegendType == "" {
				t.Errorf("%d models: %s has no legend for %q", n, c.ID, c.Names)
			}
			for _, p := range c.Layout.Problems(c.Names) {
				t.Errorf("%d models: %s: %s (%s)", n, c.ID, p, c.Layout.Describe())
			}
			if c.Layout.Legend == nil {
				continue
			}
			ink, err := chromedp.Run(b.ctx, chromedp.Evaluate[float64](fmt.Sprintf(`(%s)(document.getElementById(%q), %s)`, chartstest.PNGLegendInkJS, c.ID,
				fmt.Sprintf(`{x: %f, y: %f, w: %f, h: %f}`, c.Layout.Legend.X, c.Layout.Legend.Y, c.Layout.Legend.W, c.Layout.Legend.H)),
				chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatalf("%s: PNG export: %v", c.ID, err)
			}
			if ink < 0.02 {
				t.Errorf("%d models: %s: the PNG export's legend area is %.3f inked", n, c.ID, ink)
			}
		}
		if subjects == 0 {
			t.Errorf("%d models: no subject panels read", n)
		}
		cross := fmt.Sprintf("crossover_c%d", id)
		if got := eval[[]string](t, b, fmt.Sprintf(`(() => { const o = echarts.getInstanceByDom(document.getElementById(%q)).getOption();
			return o.series.filter(s => /^curve/.test(s.id)).map(s => s.name); })()`, cross)); !slices.Equal(got, models) {
			t.Errorf("%d models: crossover curves %q, want %q", n, got, models)
		}
		// Bands: hidden at first; shown from the legend; a model hidden in the
		// legend hides its band.
		band := fmt.Sprintf(`(() => { const inst = echarts.getInstanceByDom(document.getElementById(%q)); const o = inst.getOption();
			return [o.legend[0].selected[%q] === true, ...o.series.filter(s => /^band_width/.test(s.id)).map(s => s.areaStyle.opacity)]; })()`, cross, charts.BandsLegend)
		if got := eval[[]any](t, b, band); len(got) != n+1 || got[0] != false {
			t.Errorf("%d models: bands at first %v, want hidden, %d of them", n, got, n)
		}
		if n == 6 {
			b.screenshotOf(t, "#crossover-chart", "six-model-crossover")
			b.screenshotOf(t, "#subjects", "six-model-subjects")
			b.screenshotOf(t, "#histogram-chart", "six-model-histogram")
		}
		// Click the legend entries as a reader does.
		for _, name := range []string{charts.BandsLegend, models[0]} {
			at := eval[[]float64](t, b, fmt.Sprintf(`(() => { const div = document.getElementById(%q); div.scrollIntoView({block: "center"});
				const l = (%s)(div); const r = div.getBoundingClientRect();
				const txt = l.texts.find(x => x.owner === "legend" && x.text === %q);
				return txt ? [r.left + txt.rect.x + txt.rect.w / 2, r.top + txt.rect.y + txt.rect.h / 2] : []; })()`, cross, chartstest.LayoutJS, name))
			if len(at) != 2 {
				t.Fatalf("%d models: no legend entry %q to click", n, name)
			}
			b.do(t, "click "+name, chromedp.MouseClickXY(at[0], at[1]))
		}
		got := eval[[]any](t, b, band)
		if len(got) != n+1 || got[0] != true || got[1] != 0.0 || got[2] != 0.18 {
			t.Errorf("%d models: bands shown and %s hidden: %v, want shown with the first band's fill 0", n, models[0], got)
		}
		if n == 6 {
			b.screenshotOf(t, "#crossover-chart", "six-model-crossover-bands")
		}

		// The embed, as its snippet frames it.
		share := shareLink(t, a, id)
		b.do(t, "embed size", chromedp.EmulateViewport(720, 460))
		b.open(t, share+"/embed")
		b.waitChart(t, "#crossover-chart")
		b.settle(t)
		cs := b.chartLayouts(t)
		if len(cs) != 1 {
			t.Fatalf("%d models: the embed has %d charts", n, len(cs))
		}
		for _, p := range cs[0].Layout.Problems(models) {
			t.Errorf("%d models: embed: %s (%s)", n, p, cs[0].Layout.Describe())
		}
		type box struct {
			What   string  `json:"what"`
			Top    float64 `json:"top"`
			Bottom float64 `json:"bottom"`
		}
		boxes := eval[[]box](t, b, `[["chart", "#crossover-chart [_echarts_instance_]"], ["PNG link", ".chart-images .chart-png"],
			["SVG link", ".chart-images .chart-svg"], ["source link", ".embed-source a"]].map(([what, sel]) => {
			const el = document.querySelector(sel);
			const r = el ? el.getBoundingClientRect() : {top: -1, bottom: 1e9};
			return {what, top: r.top, bottom: r.bottom};
		})`)
		for _, bx := range boxes {
			if bx.Top < 0 || bx.Bottom > 460 {
				t.Errorf("%d models: embed at 720×460: the %s spans %.0f–%.0f px, outside the frame", n, bx.What, bx.Top, bx.Bottom)
			}
		}
		if h := eval[float64](t, b, `document.scrollingElement.scrollHeight`); h > 460 {
			t.Errorf("%d models: the embed is %.0f px tall in a 460 px frame", n, h)
		}
		if p := cs[0].Layout.Plot; p == nil || p.H < 150 {
			t.Errorf("%d models: the embed's plot %v is squeezed", n, p)
		}
		if n == 6 {
			b.screenshotOf(t, "body", "embed-720x460")
		} else {
			b.screenshotOf(t, "body", "embed-720x460-11-models")
		}
	}
	b.checkConsole(t)
}

package charts

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/charts/chartstest"
	"github.com/reach-lab/reach/static"
)

// chartPage serves snippets (each in a div of its width in px) on a page with ECharts and
// opens it in headless Chromium; it returns the tab's context.
func chartPage(t *testing.T, width int, boxes []layoutBox) context.Context {
	t.Helper()
	if os.Getenv("REACH_SKIP_BROWSER") == "1" {
		t.Skip("browser test skipped: REACH_SKIP_BROWSER=1")
	}
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		// make test and CI install Chromium: a missing one is a failure, not a silent skip.
		t.Fatal("browser tests need Chromium on PATH (apt-get install chromium), or REACH_SKIP_BROWSER=1 to skip them")
	}
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>layout</title>
<script>window.__errs = []; window.addEventListener('error', function (e) { window.__errs.push(String(e.message)); });</script>
<script src="/static/echarts.min.js"></script></head><body style="margin:8px;font-family:sans-serif">`)
	for _, bx := range boxes {
		fmt.Fprintf(&b, "<div style=\"width:%dpx;margin-bottom:12px;border:1px solid #ddd\">%s</div>\n", bx.width, bx.s.HTML)
	}
	b.WriteString("</body></html>")
	page := b.String()
	mux := http.NewServeMux()
	mux.Handle("/static/", http.StripPrefix("/static/", http.FileServerFS(static.FS)))
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, page) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(width, 1000))...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/page")); err != nil {
		t.Fatal(err)
	}
	return ctx
}

type layoutBox struct {
	s     Snippet
	width int
}

// TestLayoutInBrowser draws charts at the widths pages give them (a full-width chart, the
// 720 px embed, a 340 px small multiple) with 2, 6 and 11 models, and reads where ECharts put
// their parts: every model is named in a plain legend drawn inside the chart, below the plot
// and its axes; no label (k*, the tallest bar's count, a Venn name) covers the save-image
// icon; the PNG export holds the legend. Set REACH_SCREENSHOTS=dir to save the page.
func TestLayoutInBrowser(t *testing.T) {
	ks := []int{1, 2, 4, 8}
	models := func(n int, long bool) []string {
		var out []string
		for i := range n {
			name := fmt.Sprintf("checkpoint-%d", i)
			if long {
				name = fmt.Sprintf("Qwen2.5-7B-SimpleRL-Zoo step %d00 (%s)", i, strings.Repeat("x", i%3))
			}
			out = append(out, name)
		}
		return out
	}
	crossover := func(id string, names []string, o Options) Snippet {
		in := CrossoverInput{Title: "pass@k", Options: o, CrossoverK: 7.6, CrossoverLabel: "k* ≈ 7.6"}
		for i, n := range names {
			d := float64(i) / 100
			in.Series = append(in.Series, CurveSeries{Name: n, Ks: ks, Values: []float64{.5 + d, .7 + d, .8 + d, .88},
				Lo: []float64{.4 + d, .6 + d, .7 + d, .8}, Hi: []float64{.6 + d, .8 + d, .9 + d, .95}})
		}
		s, err := Crossover(id, in)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	histogram := func(id string, names []string) Snippet {
		in := HistogramInput{Title: "problems by c/n", Labels: []string{"0", "(0,0.5]", "(0.5,1)", "1"}}
		for i, n := range names {
			in.Series = append(in.Series, HistSeries{Name: n, Counts: []int{3, 5 + i, 4, 140 - i}}) // the tallest bar at the top right, under the icon
		}
		s, err := Histogram(id, in)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	venn, err := Venn("v", VennInput{A: "Qwen2.5-7B (base)", B: "SimpleRL-Zoo-7B checkpoint 400", Both: 300, AOnly: 20, BOnly: 30, Neither: 150})
	if err != nil {
		t.Fatal(err)
	}
	six, eleven, two := models(6, false), models(11, true), models(2, false)
	type chart struct {
		box   layoutBox
		names []string
	}
	cases := []chart{
		{layoutBox{crossover("six_wide", six, Options{}), 1000}, six},
		{layoutBox{crossover("six_embed", six, Options{}), 700}, six},
		{layoutBox{crossover("six_panel", six, Options{Height: 240}), 340}, six},
		{layoutBox{crossover("eleven", eleven, Options{}), 700}, eleven},
		{layoutBox{crossover("eleven_panel", eleven, Options{Height: 240}), 340}, eleven},
		{layoutBox{crossover("two_panel", two, Options{Height: 240}), 340}, two},
		{layoutBox{histogram("two", two), 340}, two},
		{layoutBox{histogram("two_wide", two), 1000}, two},
		{layoutBox{histogram("six", six), 700}, six},
		{layoutBox{venn, 420}, nil},
	}
	var boxes []layoutBox
	for _, c := range cases {
		boxes = append(boxes, c.box)
	}
	ctx := chartPage(t, 1100, boxes)
	eval := func(expr string, v any, opts ...chromedp.EvaluateOption) {
		t.Helper()
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr, opts...))
		if err != nil {
			t.Fatalf("%.80s: %v", expr, err)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatal(err)
		}
	}
	// The legends are fitted in the frame after the first resize: wait for two frames.
	var ok bool
	eval(`new Promise(function (r) { requestAnimationFrame(function () { requestAnimationFrame(function () { r(true); }); }); })`, &ok, chromedp.EvalAwaitPromise)
	var errs []string
	if eval(`window.__errs`, &errs); len(errs) > 0 {
		t.Errorf("script errors: %q", errs)
	}
	for _, c := range cases {
		var l chartstest.Layout
		eval(chartstest.LayoutJS+`(document.getElementById('`+c.box.s.ID+`'))`, &l)
		for _, p := range l.Problems(c.names) {
			t.Errorf("%s at %d px: %s", c.box.s.ID, c.box.width, p)
		}
		if c.names == nil || l.Legend == nil {
			continue
		}
		if bands, on := l.LegendSelected[BandsLegend]; strings.HasPrefix(c.box.s.ID, "crossover") && (!slices.Contains(l.LegendNames, BandsLegend) || bands != (len(c.names) <= 2) || !on) {
			t.Errorf("%s: bands legend entry %v, shown at first %v; want shown only with two models", c.box.s.ID, l.LegendNames, bands)
		}
		// The plot keeps room to read: the legend takes no more than the rows it needs.
		if l.Plot == nil || l.Plot.H < 110 {
			t.Errorf("%s: plot %v squeezed (%s)", c.box.s.ID, l.Plot, l.Describe())
		}
		var ink float64
		rect, _ := json.Marshal(l.Legend)
		eval(chartstest.PNGLegendInkJS+`(document.getElementById('`+c.box.s.ID+`'), `+string(rect)+`)`, &ink, chromedp.EvalAwaitPromise)
		if ink < 0.02 {
			t.Errorf("%s: the PNG export's legend area %v is %.3f inked; want the legend in it", c.box.s.ID, *l.Legend, ink)
		}
	}
	if dir := os.Getenv("REACH_SCREENSHOTS"); dir != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "chart-layouts.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

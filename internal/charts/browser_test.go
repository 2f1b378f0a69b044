package charts

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/static"
)

// TestSnippetsInBrowser loads snippets in headless Chromium with ECharts served from the
// embedded static files and checks what only a browser can: the scripts run without errors,
// hostile names neither execute nor reach the tooltip as HTML, a snippet swapped in a second
// time (as htmx does) draws again, and clicking Venn regions navigates to their URLs.
func TestSnippetsInBrowser(t *testing.T) {
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
	const evilName = `<img src=x onerror="window.__pwned=1">`
	const evilTitle = `</script><script>window.__pwned=2</script>`
	in := VennInput{A: "base", B: "rl", Both: 30, AOnly: 70, BOnly: 30, Neither: 20, RegionURL: "/picked?region={region}"}
	venn, err := Venn("b", in)
	if err != nil {
		t.Fatal(err)
	}
	cross, err := Crossover("b", CrossoverInput{Title: evilTitle, CrossoverK: 3, CrossoverLabel: "k*",
		Series: []CurveSeries{{Name: evilName, Ks: []int{1, 2, 4, 8}, Values: []float64{.2, .4, .5, .6}},
			{Name: "rl", Ks: []int{1, 2, 4, 8}, Values: []float64{.4, .45, .5, .52}}}})
	if err != nil {
		t.Fatal(err)
	}
	page := `<!doctype html><html><head><meta charset="utf-8"><title>charts browser test</title>
<script>window.__errs = []; window.addEventListener('error', function (e) { window.__errs.push(String(e.message)); });</script>
<script src="/static/echarts.min.js"></script></head><body style="margin:0;width:800px">
<div id="v">` + string(venn.HTML) + `</div><div id="c">` + string(cross.HTML) + `</div></body></html>`

	picked := make(chan string, 8)
	mux := http.NewServeMux()
	mux.Handle("/static/", http.StripPrefix("/static/", http.FileServerFS(static.FS)))
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, page) })
	mux.HandleFunc("/picked", func(w http.ResponseWriter, r *http.Request) {
		picked <- r.URL.Query().Get("region")
		fmt.Fprint(w, "<!doctype html><title>picked</title>")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	if _, err := fs.Stat(static.FS, "echarts.min.js"); err != nil {
		t.Fatal(err)
	}

	actx, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1000, 1400))...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return string(v)
	}
	drawn := `(function (id) { if (typeof echarts === 'undefined') { return false; } var c = echarts.getInstanceByDom(document.getElementById(id)); return !!c && c.getOption().series !== undefined; })`
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/page"),
		chromedp.Poll[chromedp.Void](drawn+`('`+venn.ID+`') && `+drawn+`('`+cross.ID+`')`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("charts not drawn: %v (errors: %s)", err, eval(`window.__errs`))
	}
	if errs := eval(`window.__errs`); errs != "[]" {
		t.Errorf("script errors: %s", errs)
	}
	if got := eval(`[document.title, window.__pwned === undefined, document.querySelectorAll('img').length]`); got != `["charts browser test",true,0]` {
		t.Errorf("[title, not pwned, imgs] = %s", got)
	}

	// Hover the crossover chart: the tooltip shows the name as text.
	box := eval(`(function () { var r = document.getElementById('` + cross.ID + `').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	var r [4]float64
	if err := json.Unmarshal([]byte(box), &r); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.MouseEvent("mouseMoved", r[0]+r[2]/2, r[1]+r[3]/2),
		chromedp.Poll[chromedp.Void](`Array.from(document.querySelectorAll('#c div')).some(function (d) { return d.textContent.indexOf('onerror=') >= 0; })`,
			chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("tooltip with the model name did not appear: %v", err)
	}
	if got := eval(`[window.__pwned === undefined, document.querySelectorAll('img').length]`); got != `[true,0]` {
		t.Errorf("tooltip rendered the name as HTML: [not pwned, imgs] = %s", got)
	}

	// Swap the Venn in again, as htmx does: same id, scripts re-run; the old instance goes.
	eval(`window.__old = document.getElementById('` + venn.ID + `'); true`)
	script := venn.HTML[strings.Index(string(venn.HTML), "<script>")+len("<script>") : strings.LastIndex(string(venn.HTML), "</script>")]
	js, _ := json.Marshal(string(script))
	div, _ := json.Marshal(string(venn.HTML[:strings.Index(string(venn.HTML), "<script>")]))
	eval(`(function () { var v = document.getElementById('v'); v.innerHTML = ` + string(div) + `;
var s = document.createElement('script'); s.textContent = ` + string(js) + `; v.appendChild(s); return true; })()`)
	if got := eval(`[window.__errs, ` + drawn + `('` + venn.ID + `')]`); got != `[[],true]` {
		t.Errorf("second swap: [errors, drawn] = %s", got)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`echarts.getInstanceByDom(window.__old) === undefined`,
		chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Errorf("swapped-out chart not disposed: %v", err)
	}

	// Click each region half-way between the centre line and its edge, away from the count
	// labels (which link too).
	g := vennLayoutPx(in.Both, in.AOnly, in.BOnly, 360)
	box = eval(`(function () { var r = document.getElementById('` + venn.ID + `').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	if err := json.Unmarshal([]byte(box), &r); err != nil {
		t.Fatal(err)
	}
	left := r[0] + (r[2]-g.frameW)/2
	for _, c := range []struct {
		region string
		x      float64
	}{
		{RegionBoth, (g.xb - g.rb + g.xa + g.ra) / 2},
		{RegionAOnly, (g.xa - g.ra + g.xb - g.rb) / 2},
		{RegionBOnly, (g.xa + g.ra + g.xb + g.rb) / 2},
		{RegionNeither, 20},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/page"),
			chromedp.Poll[chromedp.Void](drawn+`('`+venn.ID+`')`, chromedp.WithPollingTimeout(20*time.Second)),
			chromedp.MouseClickXY(left+c.x, r[1]+vennFrameTop+g.cy+halfHeight(g, c.x)/2)); err != nil {
			t.Fatalf("click on %s: %v", c.region, err)
		}
		select {
		case got := <-picked:
			if got != c.region {
				t.Errorf("click on %s went to region %q", c.region, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("click on %s did not navigate", c.region)
		}
		// The server has the request; let the navigation finish before the next one starts.
		deadline := time.Now().Add(10 * time.Second)
		for {
			v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname + ' ' + document.readyState`))
			if err == nil && v == "/picked complete" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after clicking %s: page %q, %v", c.region, v, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// halfHeight is how far a region reaches above and below the centre line at x: the smaller of
// the two circles' half-chords where both cover x, otherwise the covering circle's, and 40 px
// outside both (the frame).
func halfHeight(g vennGeometry, x float64) float64 {
	chord := func(cx, r float64) float64 { return math.Sqrt(math.Max(0, r*r-(x-cx)*(x-cx))) }
	ha, hb := chord(g.xa, g.ra), chord(g.xb, g.rb)
	switch {
	case ha > 0 && hb > 0:
		return math.Min(ha, hb)
	case ha > 0:
		return ha
	case hb > 0:
		return hb
	}
	return 40
}

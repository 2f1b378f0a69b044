package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	vmath "github.com/reach-lab/reach/internal/verify/math"
	"github.com/reach-lab/reach/web"
)

// Issue 6: on the MATH500 pair, a reader waits for the intervals, toggles
// "exclude guessable", sees the charts and figures change, and opens a
// base-only problem marked "could be luck".
func TestBrowserExcludeGuessableAndLuck(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	if os.Getenv("REACH_SKIP_BROWSER") == "1" {
		t.Skip("browser test skipped: REACH_SKIP_BROWSER=1")
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("browser tests need Chromium at %s: %v", chromium, err)
	}
	dir := repoData(t, "generations/math500-qwen25-7b-base-vs-simplerl-counts")
	st, _ := testdb.New(t)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	client, err := jobs.NewClient(st, jobs.Config{Workers: 2, Verifier: vmath.New(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
	srv := httptest.NewServer(web.New(st, client, web.Config{}, logger))
	t.Cleanup(srv.Close)

	id, _, err := intake.Create(context.Background(), st, client, intake.Spec{Name: "math500",
		Dataset: intake.LocalFile(repoData(t, "math500/test.jsonl")),
		Models: []intake.Model{
			{Name: "Qwen2.5-7B", File: intake.LocalFile(filepath.Join(dir, "qwen2.5-7b-base.csv"))},
			{Name: "SimpleRL-Zoo", File: intake.LocalFile(filepath.Join(dir, "qwen2.5-7b-simplerl-zoo.csv"))},
		}})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		c, err := st.GetComparison(context.Background(), id)
		if err != nil || c.Status == store.StatusFailed || time.Now().After(deadline) {
			t.Fatalf("import: %v %s %s", err, c.Status, c.Error)
		}
		if c.Status == store.StatusReady {
			break
		}
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	ctx, cancel := context.WithTimeout(tab, 2*time.Minute)
	t.Cleanup(cancel)
	signInTab(t, ctx, st, srv.URL, "admin@reach.test")
	str := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return v
	}
	// waitStr polls expr (a string expression) until it is non-empty.
	waitStr := func(what, expr string) string {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(150 * time.Millisecond) {
			c, cancel := context.WithTimeout(ctx, 5*time.Second)
			v, err := chromedp.Run(c, chromedp.Evaluate[string](expr))
			cancel()
			if err == nil && v != "" {
				return v
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s: %v", what, err)
			}
		}
	}
	open := func(url string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
			t.Fatalf("open %s: %v", url, err)
		}
	}
	// The crossover chart's base pass@1 (first point of the first series)
	// and the number of its bands, read from the drawn ECharts instance.
	const chartState = `(() => {
		const el = document.querySelector('#crossover-chart div[id^="crossover_"]');
		const ch = el && echarts.getInstanceByDom(el);
		if (!ch) { return ""; }
		const s = ch.getOption().series;
		return s[0].data[0][1].toFixed(2) + "|" + s.filter(x => String(x.id).indexOf("band") === 0).length;
	})()`

	// The page never blocks on the statistics: reload until the intervals are in.
	page := fmt.Sprintf("%s/comparisons/%d", srv.URL, id)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		open(page)
		status := waitStr("statistics status", `(document.querySelector('#stats-status') || {}).dataset ? document.querySelector('#stats-status').dataset.status : ""`)
		if status == "ready" {
			break
		}
		if status != "computing" || time.Now().After(deadline) {
			t.Fatalf("statistics status %q", status)
		}
	}
	before := waitStr("crossover chart", chartState)
	if before != "61.39|4" { // base pass@1 61.39% on all 500 problems; 2 models × 2 band series
		t.Fatalf("crossover chart state %q, want base pass@1 61.39 with 4 band series", before)
	}
	if got := str(`document.querySelector('.luck-caption').textContent.replace(/\s+/g, " ").trim()`); !strings.HasPrefix(got, "base-only 19 (4 with p < 0.05, unadjusted;") {
		t.Errorf("Venn caption %q", got)
	}
	// Every chart offers its data, the difference and Cover@τ too.
	if got := str(`["diff", "cover"].map(c => document.querySelectorAll('#' + c + '-chart ~ .data-links a[href*="/data/' + c + '.csv"]').length).join("|")`); got != "1|1" {
		t.Errorf("data links of the difference and Cover@τ charts: %q; want 1|1", got)
	}
	// Of the 4 base-only problems with p < 5 %, 2 remain after Holm: only
	// those are tagged significant; the other 2 say what they are.
	if got := str(`document.querySelectorAll('#base-only-tests .tag-sig').length + "|" + Array.from(document.querySelectorAll('#base-only-tests .tag-luck')).filter(e => e.textContent.includes("not after Holm")).length`); got != "2|2" {
		t.Errorf("base-only tags significant-after-Holm|not-after-Holm = %q; want 2|2", got)
	}

	// Toggle "exclude guessable": the page is recomputed without them.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#toggle-guessable"))); err != nil {
		t.Fatal(err)
	}
	waitStr("the unguessable variant", `location.search.indexOf("exclude=guessable") >= 0 && document.readyState === "complete" ? "y" : ""`)
	for deadline := time.Now().Add(time.Minute); str(`document.querySelector('#stats-status').dataset.status`) != "ready"; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("statistics of the unguessable variant not ready")
		}
		open(page + "?exclude=guessable")
	}
	after := waitStr("crossover chart", chartState)
	if after == before || !strings.HasSuffix(after, "|4") {
		t.Errorf("crossover chart did not change: %q then %q", before, after)
	}
	if got := str(`document.querySelector('#guessable-state').textContent`); !strings.Contains(got, "142 guessable problems excluded") {
		t.Errorf("guessable state %q", got)
	}
	if got := str(`document.querySelector('.lead').textContent`); !strings.Contains(got, "358 problems") {
		t.Errorf("lead %q, want 358 problems", got)
	}

	// Open a base-only problem marked "could be luck".
	key := str(`document.querySelector('#base-only-tests tr.luck').dataset.key`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#base-only-tests tr.luck a`))); err != nil {
		t.Fatal(err)
	}
	waitStr("the problem page", `location.pathname.indexOf("/problems/") > 0 && document.readyState === "complete" ? "y" : ""`)
	if body := str(`document.body.innerText`); !strings.Contains(body, key) {
		t.Errorf("problem page does not name %s", key)
	}
	t.Logf("crossover chart %s -> %s; opened could-be-luck base-only problem %s", before, after, key)
}

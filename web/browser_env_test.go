package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/follow"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/internal/testfiles"
	vmath "github.com/reach-lab/reach/internal/verify/math"
	"github.com/reach-lab/reach/web"
)

// chromiumPath is where Debian's chromium package (which .ci/run installs)
// puts the browser.
const chromiumPath = "/usr/bin/chromium"

// repoData is a file or folder of the real data the repository carries
// (internal/testfiles, data/).
func repoData(t *testing.T, rel string) string {
	t.Helper()
	return testfiles.Data(t, rel)
}

// app is Reach running in-process: a fresh database, River workers and the
// HTTP server.
type app struct {
	st     *store.Store
	client *jobs.Client
	url    string
}

func startApp(t *testing.T) *app { t.Helper(); return startAppWith(t, web.Config{}) }

// startAppWith is startApp with the server configured by cfg.
func startAppWith(t *testing.T, cfg web.Config) *app {
	t.Helper()
	st, _ := testdb.New(t)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	client, err := jobs.NewClient(st, jobs.Config{Workers: 4, Verifier: vmath.New(), Logger: logger,
		Register: follow.Register(st), Queues: map[string]int{follow.Queue: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		t.Fatalf("start River: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
	srv := httptest.NewServer(web.New(st, client, cfg, logger))
	t.Cleanup(srv.Close)
	return &app{st: st, client: client, url: srv.URL}
}

// waitReady polls the store until the comparison is ready, failing the test
// if it fails or takes longer than timeout.
func (a *app) waitReady(t *testing.T, id int64, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c, err := a.st.GetComparison(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.Status == store.StatusReady:
			return
		case c.Status == store.StatusFailed:
			t.Fatalf("comparison %d (%s) failed: %s", id, c.Name, c.Error)
		case time.Now().After(deadline):
			t.Fatalf("comparison %d (%s) still %s after %v", id, c.Name, c.Status, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// browser is one headless Chromium tab, with the console messages the
// pages wrote.
type browser struct {
	ctx  context.Context
	mu   sync.Mutex
	msgs []chromedp.ConsoleMessage
}

// newBrowser starts headless Chromium with its own profile. Without
// Chromium the test fails (make test and CI install it); REACH_SKIP_BROWSER=1
// skips it.
// The tab's actions share one deadline of timeout.
func newBrowser(t *testing.T, timeout time.Duration) *browser {
	t.Helper()
	// REACH_SKIP_BROWSER=1 skips the browser tests whether or not Chromium
	// is there (make test names it when it cannot install Chromium).
	if os.Getenv("REACH_SKIP_BROWSER") == "1" {
		t.Skip("browser test skipped: REACH_SKIP_BROWSER=1")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("browser tests need Chromium at %s (apt-get install chromium), or REACH_SKIP_BROWSER=1 to skip them: %v", chromiumPath, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	// Cleanups run last-in first-out: the browser is gone before the temp
	// profile directory is removed and before the server closes.
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser, bound to ctx (no deadline)
		t.Fatalf("start Chromium %s: %v", chromiumPath, err)
	}
	b := &browser{}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.msgs = append(b.msgs, m)
			b.mu.Unlock()
		}
	}()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancel)
	b.ctx = tctx
	return b
}

// do runs actions, failing the test with what on error.
func (b *browser) do(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// open navigates to url and fails unless the page answers 200.
func (b *browser) open(t *testing.T, url string) {
	t.Helper()
	resp, err := chromedp.Run(b.ctx, chromedp.NavigateResponse(url))
	// The page shown may navigate by itself as ours starts (a progress
	// page going to its comparison once ready), which aborts ours: again.
	for try := 0; try < 3 && err != nil && strings.Contains(err.Error(), "net::ERR_ABORTED"); try++ {
		time.Sleep(200 * time.Millisecond)
		resp, err = chromedp.Run(b.ctx, chromedp.NavigateResponse(url))
	}
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	if resp.Status != 200 {
		t.Fatalf("open %s: HTTP %d", url, resp.Status)
	}
}

// eval evaluates a JavaScript expression in the page and decodes its value.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", brief(expr), err)
	}
	return v
}

// waitFor evaluates expr, which must give a string, until it is non-empty
// and returns it. Evaluation errors (a page navigating away mid-call) count
// as "not yet", so the wait survives navigations, which chromedp.Poll does
// not.
func (b *browser) waitFor(t *testing.T, what, expr string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		cancel()
		if err == nil && v != "" {
			return v
		}
		lastErr = err
		if time.Now().After(deadline) || b.ctx.Err() != nil {
			t.Fatalf("waiting for %s: not there after %v (last error: %v)\n%s", what, timeout, lastErr, b.describe())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// describe tells where the tab is and what it shows, for failure messages.
func (b *browser) describe() string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(b.ctx), 3*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + (document.body ? document.body.innerText.slice(0, 1500) : "")`))
	if err != nil {
		return fmt.Sprintf("(page unavailable: %v)", err)
	}
	return "page: " + s
}

// clickAndWait clicks the element sel and waits until the tab shows a page
// whose location matches path and whose document has loaded.
func (b *browser) clickAndWait(t *testing.T, sel string, path *regexp.Regexp) string {
	t.Helper()
	b.do(t, "click "+sel, chromedp.Click(chromedp.CSS(sel)))
	return b.waitLoaded(t, path)
}

// waitLoaded waits until the location's path and query match re and the
// document has loaded, and returns the path and query.
func (b *browser) waitLoaded(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	return b.waitFor(t, "a loaded page at "+re.String(), fmt.Sprintf(`(() => {
		const here = location.pathname + location.search;
		return document.readyState === "complete" && new RegExp(%q).test(here) ? here : "";
	})()`, re.String()), 15*time.Second)
}

// checkConsole fails the test for any console error or uncaught exception
// the pages produced (the favicon the browser asks for is not ours).
func (b *browser) checkConsole(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.msgs {
		if m.Type != chromedp.ConsoleError && m.Type != chromedp.ConsoleException {
			continue
		}
		if strings.HasSuffix(m.URL, "/favicon.ico") {
			continue
		}
		t.Errorf("browser console %s at %s:%d: %s", m.Type, m.URL, m.Line+1, m.Text)
	}
}

func brief(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// screenshot saves what the tab shows as name.png under $REACH_SCREENSHOTS
// when that is set (for looking at pages; no test reads it).
func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("REACH_SCREENSHOTS")
	if dir == "" {
		return
	}
	// The whole page, not only the viewport (quality 100: PNG).
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"riverqueue.com/riverui"

	"github.com/reach-lab/reach/internal/examples"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/web"
)

// Every page carries a Content-Security-Policy whose fresh nonce is on each
// inline (chart) script and on nothing else. The comparison page has none:
// its charts come in one script file of its own origin, named by its
// content, kept by the browser, and the same after a restart.
func TestPagesCarryCSPNonce(t *testing.T) {
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "csp@lab.org", true, "")
	ids, err := examples.SeedIfEmpty(context.Background(), a.st, a.client)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		a.waitReady(t, id, time.Minute)
	}
	getResp := func(path string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, a.url+path, nil)
		req.AddCookie(acct.Cookie)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		return resp, string(b)
	}
	get := func(path string) (string, string) {
		resp, body := getResp(path)
		return resp.Header.Get("Content-Security-Policy"), body
	}
	nonceRe := regexp.MustCompile(`script-src 'self' 'nonce-([A-Za-z0-9+/]+)'`)
	fileRe := regexp.MustCompile(`<script src="(/comparisons/[0-9]+/charts/[0-9a-f]{32}\.js[^"]*)" defer></script><script src="/static/app.js" defer>`)
	var seen []string
	for _, id := range ids {
		csp, body := get("/comparisons/" + itoa(id) + "?sort=diff&x=%22%3E")
		m := nonceRe.FindStringSubmatch(csp)
		if m == nil || !strings.Contains(csp, "object-src 'none'") || !strings.Contains(csp, "frame-ancestors 'self'") {
			t.Fatalf("comparison %d: CSP %q", id, csp)
		}
		for _, tag := range regexp.MustCompile(`<script(?: [^>]*)?>`).FindAllString(body, -1) {
			if !strings.Contains(tag, "src=") {
				t.Errorf("comparison %d: an inline script: %s", id, tag)
			}
		}
		files := fileRe.FindAllStringSubmatch(body, -1)
		if len(files) != 1 {
			t.Fatalf("comparison %d: %d chart files", id, len(files))
		}
		src := strings.ReplaceAll(files[0][1], "&amp;", "&")
		resp, js := getResp(src)
		n := strings.Count(js, "echarts.init(")
		if n < 3 || resp.Header.Get("Content-Type") != "text/javascript; charset=utf-8" ||
			!strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("comparison %d: chart file %s: %d charts, headers %v", id, src, n, resp.Header)
		}
		// A name this server does not know (another server's, or from before
		// a restart with other data) gets the current charts, not kept.
		other := regexp.MustCompile(`[0-9a-f]{32}`).ReplaceAllString(src, strings.Repeat("0", 32))
		// (The statistics job may have added charts since: at least 3.)
		if resp, again := getResp(other); strings.Count(again, "echarts.init(") < 3 || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("comparison %d: unknown chart file: %d bytes, Cache-Control %q", id, len(again), resp.Header.Get("Cache-Control"))
		}
		seen = append(seen, m[1])
	}
	if len(seen) == 2 && seen[0] == seen[1] {
		t.Error("two responses share a nonce")
	}
	if csp, _ := get("/"); !nonceRe.MatchString(csp) {
		t.Errorf("home page CSP %q", csp)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// River's job dashboard at /riverui/ runs under its Content-Security-Policy:
// the real prebuilt UI renders, and Chromium reports no violation.
func TestRiverUIRunsUnderCSP(t *testing.T) {
	st, _ := testdb.New(t)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	client, err := jobs.NewClient(st, jobs.Config{Workers: 0, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ui, err := riverui.NewHandler(&riverui.HandlerOpts{Endpoints: riverui.NewEndpoints(client, nil), Logger: logger, Prefix: "/riverui"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := ui.Start(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.New(st, client, web.Config{JobsUI: ui}, logger))
	t.Cleanup(srv.Close)
	b := newBrowser(t, time.Minute)
	signInTab(t, b.ctx, st, srv.URL, "admin@reach.test")
	b.open(t, srv.URL+"/riverui/")
	b.waitFor(t, "the River UI rendered", `document.querySelector("#root") && document.querySelector("#root").innerText.includes("Jobs") ? "yes" : ""`, 20*time.Second)
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.msgs {
		if strings.Contains(m.Text, "Content Security Policy") || strings.Contains(m.Text, "Content-Security-Policy") {
			t.Errorf("CSP violation on /riverui/: %s", m.Text)
		}
	}
}

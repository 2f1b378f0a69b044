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
// inline (chart) script and on nothing else.
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
	get := func(path string) (string, string) {
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
		return resp.Header.Get("Content-Security-Policy"), string(b)
	}
	nonceRe := regexp.MustCompile(`script-src 'self' 'nonce-([A-Za-z0-9+/]+)'`)
	var seen []string
	for _, id := range ids {
		csp, body := get("/comparisons/" + itoa(id))
		m := nonceRe.FindStringSubmatch(csp)
		if m == nil || !strings.Contains(csp, "object-src 'none'") || !strings.Contains(csp, "frame-ancestors 'self'") {
			t.Fatalf("comparison %d: CSP %q", id, csp)
		}
		inline := regexp.MustCompile(`<script(?: [^>]*)?>`).FindAllString(body, -1)
		charts := 0
		for _, tag := range inline {
			if strings.Contains(tag, "src=") {
				continue
			}
			charts++
			if tag != `<script nonce="`+m[1]+`">` {
				t.Errorf("comparison %d: inline script without this response's nonce: %s", id, tag)
			}
		}
		if charts < 3 {
			t.Errorf("comparison %d: %d inline chart scripts, want at least 3", id, charts)
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

package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// A view parameter the page cannot show is refused, naming it, on the
// page, its data and the API; it is never replaced by the default view (a
// new user's ?min_n=100 on a comparison of n = 4 showed every problem,
// and a 250-character search was cut to 200 and matched). Fixture: two
// problems, n = 4 for both models.
func TestViewParamsRefused(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cookie := admin.Cookie.Name + "=" + admin.Cookie.Value
	cid, _, pid := readyComparison(t, srv.st, "views", 0, "statement")
	long := url.QueryEscape(strings.Repeat("wait, ", 40) + "NOTPRESENT")
	for _, c := range []struct {
		query, want string
		code        int
	}{
		{"estimator=bogus", `?estimator=&#34;bogus&#34;`, 400},
		{"exclude=bogus", `?exclude=&#34;bogus&#34;`, 400},
		{"without=bogus", `?without=&#34;bogus&#34;`, 400},
		{"min_n=abc", `?min_n=&#34;abc&#34;`, 400},
		{"min_n=1", `?min_n=&#34;1&#34;`, 400},
		{"min_n=5", "no problem has at least 5 samples from every model", 409},
		{"q=" + long + "&in=completions", "?q= is 250 characters long", 400},
		{"answer=" + long, "?answer= is 250 characters long", 400},
	} {
		code, page := get(t, fmt.Sprintf("%s/comparisons/%d?%s", srv.url, cid, c.query), "Cookie", cookie)
		if code != c.code || !strings.Contains(page, c.want) {
			t.Errorf("page ?%.40s: HTTP %d, want %d with %q", c.query, code, c.code, c.want)
		}
		code, body := get(t, fmt.Sprintf("%s/api/v1/comparisons/%d/report?%s", srv.url, cid, c.query), "Cookie", cookie)
		if code != c.code || !strings.Contains(body, `"error"`) {
			t.Errorf("API ?%.40s: HTTP %d %.200s, want %d", c.query, code, body, c.code)
		}
		if code, _ := get(t, fmt.Sprintf("%s/comparisons/%d/data/crossover.csv?%s", srv.url, cid, c.query), "Cookie", cookie); code != c.code {
			t.Errorf("crossover.csv ?%.40s: HTTP %d, want %d", c.query, code, c.code)
		}
	}
	// The views the page links to still work, and min_n below every n
	// leaves nothing out.
	for _, q := range []string{"estimator=biased", "estimator=unbiased", "without=grading-errors", "min_n=4", "q=x&in=completions", "min_n="} {
		if code, _ := get(t, fmt.Sprintf("%s/comparisons/%d?%s", srv.url, cid, q), "Cookie", cookie); code != 200 {
			t.Errorf("?%s: HTTP %d, want 200", q, code)
		}
	}
	if code, page := get(t, fmt.Sprintf("%s/comparisons/%d/problems/%d?answer=%s", srv.url, cid, pid, long), "Cookie", cookie); code != 400 || !strings.Contains(page, "?answer= is 250 characters long") {
		t.Errorf("problem page with a long answer filter: HTTP %d", code)
	}
	// A problem page listed from a view no longer valid keeps its solved
	// set's neighbours.
	if code, _ := get(t, fmt.Sprintf("%s/comparisons/%d/problems/%d?list=%s", srv.url, cid, pid, url.QueryEscape("estimator=bogus")), "Cookie", cookie); code != 200 {
		t.Errorf("problem page with a stale list: HTTP %d, want 200", code)
	}
}

// The icon browsers ask for by themselves is served, without a sign-in
// (a 404 showed in every page's console).
func TestFavicon(t *testing.T) {
	srv := newServer(t)
	resp, err := noRedirect.Get(srv.url + "/favicon.ico")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 301 || resp.Header.Get("Location") != "/static/favicon.svg" {
		t.Errorf("/favicon.ico: HTTP %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, err = noRedirect.Get(srv.url + "/static/favicon.svg")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" {
		t.Errorf("/static/favicon.svg: HTTP %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// A failed comparison does not offer to follow a folder of checkpoints
// (its base model's import failed: there is nothing to add them to); a
// ready one does.
func TestFailedComparisonOffersNoFollow(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cookie := admin.Cookie.Name + "=" + admin.Cookie.Value
	cid, _, _ := readyComparison(t, srv.st, "follow", 0, "statement")
	if _, page := get(t, fmt.Sprintf("%s/comparisons/%d", srv.url, cid), "Cookie", cookie); !strings.Contains(page, `id="follow-link"`) {
		t.Errorf("a ready comparison does not offer to follow a folder")
	}
	if err := srv.st.SetComparisonStatus(context.Background(), cid, store.StatusFailed, "base.jsonl:3: bad"); err != nil {
		t.Fatal(err)
	}
	if code, page := get(t, fmt.Sprintf("%s/comparisons/%d", srv.url, cid), "Cookie", cookie); code != 200 || strings.Contains(page, "Follow a server folder") {
		t.Errorf("a failed comparison: HTTP %d, offers to follow a folder: %v", code, strings.Contains(page, "Follow a server folder"))
	}
}

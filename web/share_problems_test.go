package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// A live share link's 404 for a problem its comparison does not have, or
// for texts it does not show, says the link works and links back to it;
// an unknown link is still "does not exist" (a trial read that its link
// was revoked when it asked for problem 600).
func TestSharedMissingIsNotGone(t *testing.T) {
	f := newFixture(t)
	texts, plain := f.w[worldA].texts, f.w[worldA].token
	for _, c := range []struct{ path, want string }{
		{fmt.Sprintf("/s/%s/problems/%d", texts, f.pid+100000), "has no such problem"},
		{fmt.Sprintf("/s/%s/problems/%d", plain, f.pid), "does not show problems and their completions"},
	} {
		code, body := f.page("anonymous", c.path)
		if code != 404 || !strings.Contains(body, c.want) || strings.Contains(body, "revoked") || !strings.Contains(body, `href="/s/`) {
			t.Errorf("%s: %d, want 404 saying %q and linking back; got %q", c.path, code, c.want, section(body, "<h1>"))
		}
	}
	if code, body := f.page("anonymous", fmt.Sprintf("/s/rsh_nosuchlink/problems/%d", f.pid)); code != 404 || !strings.Contains(body, "does not exist, was revoked or has expired") {
		t.Errorf("an unknown link: %d, %q", code, section(body, "<h1>"))
	}
}

// A share link shows the problems its page lists and no others: with
// texts to every chart or the Venn diagrams, the base-only problems; to
// another single chart, none (a trial's histogram link with texts served
// every problem by id, and with it each solved set through the samples'
// verdicts).
func TestShareLinkShowsOnlyListedProblems(t *testing.T) {
	f := newFixture(t)
	p1 := f.pid + 1 // both models solve p1: not base-only
	var p1Key string
	if err := f.srv.st.Pool().QueryRow(t.Context(), `SELECT key FROM problems WHERE id = $1`, p1).Scan(&p1Key); err != nil || p1Key != "p1" {
		t.Fatalf("problem %d is %q (%v), want p1", p1, p1Key, err)
	}
	_, venn := shareToken(t, f.srv.st, store.ShareLink{ComparisonID: f.cid, ShowTexts: true, Chart: "venn"})
	_, hist := shareToken(t, f.srv.st, store.ShareLink{ComparisonID: f.cid, ShowTexts: true, Chart: "histogram"})
	every := f.w[worldA].texts
	for _, c := range []struct {
		token string
		pid   int64
		code  int
		want  string
	}{
		{every, f.pid, 200, "Problem"},
		{venn, f.pid, 200, "Problem"},
		{every, p1, 404, "shows only the problems its page lists"},
		{venn, p1, 404, "shows only the problems its page lists"},
		{hist, f.pid, 404, "shares one chart, which lists no problems"},
	} {
		for _, path := range []string{
			fmt.Sprintf("/s/%s/problems/%d", c.token, c.pid),
			fmt.Sprintf("/s/%s/problems/%d/models/1/samples", c.token, c.pid),
			fmt.Sprintf("/s/%s/runs/%d/problems/%d/samples/0/text", c.token, f.rid, c.pid),
		} {
			code, body := f.page("anonymous", path)
			if code != c.code || (c.code == 404 && !strings.Contains(body, c.want)) {
				t.Errorf("%s: %d, want %d (%q); got %q", path, code, c.code, c.want, section(body, "<h1>"))
			}
		}
	}
}

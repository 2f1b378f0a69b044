package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// A review, a verdict override and a reasoning label made from a problem
// opened in the problem table's view return to that view (?list=), so j / k
// keep the table's order.
func TestProblemFormsKeepTheList(t *testing.T) {
	f := newFixture(t)
	list := "region=base-only&sort=diff"
	base := fmt.Sprintf("/comparisons/%d/problems/%d", f.cid, f.pid)
	want := base + "?list=" + url.QueryEscape(list)
	for _, tc := range []struct {
		name, path, anchor string
		form               url.Values
	}{
		{"review", base + "/review", "#review", url.Values{"verdict": {"genuine"}, "list": {list}}},
		{"override", fmt.Sprintf("/comparisons/%d/runs/%d/problems/%d/samples/0/verdict", f.cid, f.rid, f.pid), "#sample-", url.Values{"status": {"incorrect"}, "list": {list}}},
		{"reasoning label", fmt.Sprintf("/comparisons/%d/runs/%d/problems/%d/samples/0/reasoning", f.cid, f.rid, f.pid), "#sample-", url.Values{"label": {"valid"}, "list": {list}}},
	} {
		code, loc, body := f.send("editor", tc.path, tc.form)
		if code != 303 || len(loc) < len(want+tc.anchor) || loc[:len(want+tc.anchor)] != want+tc.anchor {
			t.Errorf("%s: HTTP %d to %q (%.200s), want 303 to %s%s…", tc.name, code, loc, body, want, tc.anchor)
		}
	}
}

// The comparison page keeps its rendered problem table per report, view
// and reviews: a review, or a change of its note, shows at once, in the
// table's review column and in its verdict filter.
func TestProblemTableShowsNewReviews(t *testing.T) {
	f := newFixture(t)
	page := fmt.Sprintf("/comparisons/%d?review=reviewed", f.cid)
	table := func() string {
		code, body := f.page("editor", page)
		if code != 200 {
			t.Fatalf("GET %s: HTTP %d", page, code)
		}
		i := strings.Index(body, `id="problems"`)
		if i < 0 {
			t.Fatalf("no problem table in %s", page)
		}
		return body[i:]
	}
	if got := table(); !strings.Contains(got, `data-matching="0"`) {
		t.Fatalf("before any review, the reviewed list is not empty: %.300s", got)
	}
	review := fmt.Sprintf("/comparisons/%d/problems/%d/review", f.cid, f.pid)
	for _, note := range []string{"first look", "second look"} {
		if code, _, body := f.send("editor", review, url.Values{"verdict": {"genuine"}, "note": {note}}); code != 303 {
			t.Fatalf("review: HTTP %d %.200s", code, body)
		}
		got := table()
		if !strings.Contains(got, `data-matching="1"`) || !strings.Contains(got, note) {
			t.Errorf("after the review %q the table reads %.400s", note, got)
		}
	}
}

// The audit log names a problem by its id in the dataset, not Reach's row id.
func TestAuditNamesProblems(t *testing.T) {
	f := newFixture(t)
	review := fmt.Sprintf("/comparisons/%d/problems/%d/review", f.cid, f.pid)
	if code, _, body := f.send("editor", review, url.Values{"verdict": {"genuine"}}); code != 303 {
		t.Fatalf("review: HTTP %d %.200s", code, body)
	}
	p, err := f.srv.st.GetProblem(context.Background(), f.pid)
	if err != nil {
		t.Fatal(err)
	}
	code, body := f.page("editor", fmt.Sprintf("/comparisons/%d/audit", f.cid))
	link := fmt.Sprintf(`href="/comparisons/%d/problems/%d"><bdi>%s</bdi></a>`, f.cid, f.pid, p.Key)
	if code != 200 || !strings.Contains(body, link) {
		t.Errorf("audit page (HTTP %d) lacks %s", code, link)
	}
}

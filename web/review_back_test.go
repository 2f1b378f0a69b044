package web_test

import (
	"fmt"
	"net/url"
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

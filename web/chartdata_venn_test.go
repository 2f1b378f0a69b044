package web_test

import (
	"fmt"
	"strings"
	"testing"
)

// The solved-set data lists every region's problems, both and neither
// included (a new user found their ids left empty). Fixture: p0 base 1 of
// 4, RL 0 of 4 (base-only); p1 4 of 4 for both (both).
func TestVennDataListsEveryRegion(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cookie := admin.Cookie.Name + "=" + admin.Cookie.Value
	cid, _, _ := readyComparison(t, srv.st, "venn", 0, "statement")
	code, csv := get(t, fmt.Sprintf("%s/comparisons/%d/data/venn-1.csv", srv.url, cid), "Cookie", cookie)
	for _, want := range []string{"\nboth,1,p1\n", "\nbase-only,1,p0\n", "\nother-only,0,\n", "\nneither,0,\n"} {
		if code != 200 || !strings.Contains(csv, want) {
			t.Errorf("venn-1.csv lacks %q: HTTP %d\n%s", want, code, csv)
		}
	}
}

// A chart's data is served under the API to a bearer token (a new user's
// script got the login page), errors as JSON.
func TestChartDataThroughTheAPI(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cid, _, _ := readyComparison(t, srv.st, "api-data", 0, "statement")
	token := admin.Token
	code, csv := get(t, fmt.Sprintf("%s/api/v1/comparisons/%d/data/crossover.csv", srv.url, cid), "Authorization", "Bearer "+token)
	if code != 200 || !strings.HasPrefix(csv, "k,base,rl\n1,0.625,0.5\n") {
		t.Errorf("crossover.csv through the API: HTTP %d\n%s", code, csv)
	}
	code, body := get(t, fmt.Sprintf("%s/api/v1/comparisons/%d/data/crossover.csv?min_n=abc", srv.url, cid), "Authorization", "Bearer "+token)
	if code != 400 || !strings.HasPrefix(body, `{"error":`) {
		t.Errorf("a bad view through the API: HTTP %d %s", code, body)
	}
	if code, _ := get(t, fmt.Sprintf("%s/api/v1/comparisons/%d/data/crossover.csv", srv.url, cid)); code != 401 {
		t.Errorf("no token: HTTP %d, want 401", code)
	}
}

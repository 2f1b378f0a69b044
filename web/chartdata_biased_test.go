package web_test

import (
	"fmt"
	"strings"
	"testing"
)

// The crossover chart's data in the page's biased view carries the biased
// estimator's curves the chart draws, named (a new user found the download
// of ?estimator=biased byte for byte the unbiased one). Fixture: p0 base
// 1 of 4, RL 0 of 4; p1 4 of 4 for both. At k = 2 the unbiased base
// pass@2 is (1 − C(3,2)/C(4,2) + 1)/2 = 0.75, the biased (1 − (3/4)² + 1)/2
// = 0.71875.
func TestChartDataBiasedView(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cookie := admin.Cookie.Name + "=" + admin.Cookie.Value
	cid, _, _ := readyComparison(t, srv.st, "biased", 0, "statement")
	code, csv := get(t, fmt.Sprintf("%s/comparisons/%d/data/crossover.csv?estimator=biased", srv.url, cid), "Cookie", cookie)
	if want := "k,base,rl,base biased,rl biased\n1,0.625,0.5,0.625,0.5\n2,0.75,0.5,0.71875,0.5\n"; code != 200 || !strings.HasPrefix(csv, want) {
		t.Errorf("biased view's data: HTTP %d\n%s\nwant it to start with\n%s", code, csv, want)
	}
	code, csv = get(t, fmt.Sprintf("%s/comparisons/%d/data/crossover.csv", srv.url, cid), "Cookie", cookie)
	if code != 200 || !strings.HasPrefix(csv, "k,base,rl\n1,0.625,0.5\n2,0.75,0.5\n") {
		t.Errorf("default view's data: HTTP %d\n%s", code, csv)
	}
	code, js := get(t, fmt.Sprintf("%s/comparisons/%d/data/crossover.json?estimator=biased", srv.url, cid), "Cookie", cookie)
	if code != 200 || !strings.Contains(js, "biased estimator 1 − (1 − c/n)^k") {
		t.Errorf("biased view's JSON does not say so: HTTP %d %s", code, js)
	}
}

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

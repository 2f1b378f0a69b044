package web_test

import (
	"encoding/csv"
	"fmt"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// The support figure at the ε of the query, on readyComparison's counts:
// p0 (base 1 of 4, RL 0 of 4) and p1 (both 4 of 4). At ε = 0 p0 is in the
// base model's support only (shrunk) and p1 in both (preserved); at ε = 0.5
// the base model's 1/4 is below ε, so p0 is outside both. ε outside [0, 1]
// is refused, and share links do not serve the debate charts' data.
func TestDebateSupportData(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cid, _, _ := readyComparison(t, srv.st, "support", 0, "What is 1+1?")
	cookie := admin.Cookie.Name + "=" + admin.Cookie.Value
	base := fmt.Sprintf("%s/comparisons/%d", srv.url, cid)
	row := func(query string) []string {
		t.Helper()
		code, body := get(t, base+"/data/support.csv"+query, "Cookie", cookie)
		if code != 200 {
			t.Fatalf("support.csv%s: HTTP %d\n%.300s", query, code, body)
		}
		recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
		if err != nil || len(recs) != 2 {
			t.Fatalf("support.csv%s: %v, %d records\n%s", query, err, len(recs), body)
		}
		return recs[1]
	}
	// base, other, epsilon, preserved, shrunk, expanded, outside, retention, discovery, …, shrunk ids, expanded ids
	if r := row(""); strings.Join(r[:9], ",") != "base,rl,0,1,1,0,0,0.5,0" || r[11] != "p0" {
		t.Errorf("support at ε = 0: %q", r)
	}
	if r := row("?eps=0.5"); strings.Join(r[:9], ",") != "base,rl,0.5,1,0,0,1,1,0" || r[11] != "" {
		t.Errorf("support at ε = 0.5: %q", r)
	}
	if code, _ := get(t, base+"/data/support.json?eps=2", "Cookie", cookie); code != 404 {
		t.Errorf("support at ε = 2: HTTP %d, want 404", code)
	}
	code, page := get(t, base+"?eps=0.5", "Cookie", cookie)
	if code != 200 || !strings.Contains(page, "Empirical support at ε = 0.5") || !strings.Contains(page, `support.csv?eps=0.5`) {
		t.Errorf("page at ?eps=0.5: HTTP %d, want the support figure at 0.5 with its data link", code)
	}
	if _, page = get(t, base+"?eps=x", "Cookie", cookie); !strings.Contains(page, `id="eps-error"`) {
		t.Error("page at ?eps=x: no note that ε was not used")
	}
	_, token := shareToken(t, srv.st, store.ShareLink{ComparisonID: cid})
	for _, name := range []string{"support.csv", "cot.json", "perplexity.csv", "entropy.csv"} {
		if code, _ := get(t, srv.url+"/s/"+token+"/data/"+name); code != 404 {
			t.Errorf("shared %s: HTTP %d, want 404", name, code)
		}
	}
}

package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A share link shows the view its creator was looking at: the page's
// "Share" links carry the view, the form says which view it shares, the
// link keeps it, and the shared page and its data follow it (a new user
// shared the guessable-excluded crossover and the link showed the default
// figures). Fixture as TestChartDataBiasedView.
func TestShareKeepsTheView(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cookie := admin.Cookie.Name + "=" + admin.Cookie.Value
	cid, _, _ := readyComparison(t, srv.st, "view", 0, "statement")

	_, page := get(t, fmt.Sprintf("%s/comparisons/%d?estimator=biased", srv.url, cid), "Cookie", cookie)
	if !strings.Contains(page, fmt.Sprintf(`href="/comparisons/%d/shares?chart=crossover&amp;estimator=biased"`, cid)) ||
		!strings.Contains(page, fmt.Sprintf(`href="/comparisons/%d/shares?estimator=biased"`, cid)) {
		t.Error("the biased view's share links do not carry the view")
	}
	_, form := get(t, fmt.Sprintf("%s/comparisons/%d/shares?chart=crossover&estimator=biased&sort=p", srv.url, cid), "Cookie", cookie)
	if !strings.Contains(form, `name="view" value="estimator=biased"`) || !strings.Contains(form, "biased estimator 1 − (1 − c/n)^k") {
		t.Error("the share form does not carry or name the view")
	}

	api := fmt.Sprintf("%s/api/v1/comparisons/%d/shares", srv.url, cid)
	post := func(body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", api, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Cookie", cookie)
		req.Header.Set("Origin", srv.url)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := res.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return res.StatusCode, b.String()
	}
	for _, bad := range []string{"sort=p", "estimator=plugin", "min_n=1", "%zz"} {
		if code, body := post(fmt.Sprintf(`{"view": %q}`, bad)); code != 400 || !strings.Contains(body, "view") {
			t.Errorf("view %q: HTTP %d %s, want 400 naming the view", bad, code, body)
		}
	}
	code, body := post(`{"chart": "crossover", "view": "estimator=biased"}`)
	if code != 201 {
		t.Fatalf("create: HTTP %d %s", code, body)
	}
	link := body[strings.Index(body, "/s/"):]
	link = link[:strings.Index(link, `"`)]
	code, shared := get(t, srv.url+link)
	if code != 200 || !strings.Contains(shared, `id="shared-view"`) || !strings.Contains(shared, "biased estimator") {
		t.Errorf("the shared page does not state its view: HTTP %d", code)
	}
	if code, csv := get(t, srv.url+link+"/data/crossover.csv"); code != 200 || !strings.HasPrefix(csv, "k,base,rl,base biased,rl biased\n1,0.625,0.5,0.625,0.5\n2,0.75,0.5,0.71875,0.5\n") {
		t.Errorf("the shared data is not the view's: HTTP %d\n%s", code, csv)
	}
	// A link without a view keeps showing the default one.
	code, body = post(`{"chart": "crossover"}`)
	if code != 201 {
		t.Fatalf("create: HTTP %d %s", code, body)
	}
	plain := body[strings.Index(body, "/s/"):]
	plain = plain[:strings.Index(plain, `"`)]
	if _, csv := get(t, srv.url+plain+"/data/crossover.csv"); !strings.HasPrefix(csv, "k,base,rl\n1,0.625,0.5\n2,0.75,0.5\n") {
		t.Errorf("default link's data:\n%s", csv)
	}
	if _, shared := get(t, srv.url+plain); strings.Contains(shared, `id="shared-view"`) {
		t.Error("a default view is announced as a view")
	}

	// A link to one chart shows that chart's figures only: Venn, the solved
	// counts; histogram, pass@1 and no base-only list even with texts.
	open := func(body string) string {
		t.Helper()
		code, b := post(body)
		if code != 201 {
			t.Fatalf("create %s: HTTP %d %s", body, code, b)
		}
		l := b[strings.Index(b, "/s/"):]
		_, page := get(t, srv.url+l[:strings.Index(l, `"`)])
		return page
	}
	venn := open(`{"chart": "venn"}`)
	if strings.Contains(venn, "crossover k*") || strings.Contains(venn, "<th>pass@1</th>") || !strings.Contains(venn, "<th>solved</th>") {
		t.Error("a Venn-only link's headline is not the solved counts alone")
	}
	hist := open(`{"chart": "histogram", "show_texts": true}`)
	if strings.Contains(hist, "crossover k*") || strings.Contains(hist, "<th>solved</th>") || !strings.Contains(hist, "<th>pass@1</th>") ||
		strings.Contains(hist, "only the base model solved") {
		t.Error("a histogram-only link shows other charts' figures or the base-only list")
	}
}

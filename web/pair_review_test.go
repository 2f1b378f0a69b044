package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// With more than one other model, every view of a pair follows the chosen
// pair (?pair=), and a review belongs to the problem and that pair (issue
// 22.2: ?pair=2 switched the Venn, but the luck table, the review form and
// the summary stayed on pair 1, and a problem base-only against step 300
// showed as "both" with no form). Here p0 is solved by the base model and
// step 100, not by step 300.
func TestReviewFollowsThePair(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	s100, s300 := 100, 300
	sc := storeReady(t, s.st, "pairs", 0, twoProblems("p0", "What is 1+1?"),
		[]store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "step-100", Role: "checkpoint", Step: &s100}, {ModelName: "step-300", Role: "checkpoint", Step: &s300}},
		4, func(run int, p store.Problem, i int) bool { return p.Key == "p1" || (run < 2 && i == 0) })
	acct := newAccount(t, s.st, s.url, "reviewer@lab.org", true, "")
	get := func(path string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.url+path, nil)
		req.AddCookie(acct.Cookie)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: HTTP %d", path, resp.StatusCode)
		}
		return string(b)
	}
	p0 := sc.Ps[0].ID
	problem := fmt.Sprintf("/comparisons/%d/problems/%d", sc.ID, p0)

	// Against step 100 p0 is solved by both: no review form.
	if page := get(problem); strings.Contains(page, `id="review-form"`) || !strings.Contains(page, `data-pair="1"`) {
		t.Errorf("pair 1: p0 should be 'both' with no review form")
	}
	// Against step 300 it is base-only: the form, with its pair.
	page := get(problem + "?pair=2")
	if !strings.Contains(page, `id="review-form"`) || !strings.Contains(page, `name="pair" value="2"`) || !strings.Contains(page, `data-pair="2"`) {
		t.Fatalf("pair 2: p0 should be base-only with a review form for pair 2")
	}
	// The comparison page's luck table follows ?pair=2.
	cmp := get(fmt.Sprintf("/comparisons/%d?pair=2", sc.ID))
	luck := cmp[strings.Index(cmp, `id="base-only-tests"`):]
	luck = luck[:strings.Index(luck, "</div>")]
	if !strings.Contains(luck, `data-key="p0"`) || !strings.Contains(cmp, `id="luck-pair" data-pair="2"`) {
		t.Errorf("the luck table with ?pair=2 does not list p0 as base-only:\n%.600s", luck)
	}
	// A verdict given against step 300 is that pair's.
	form := url.Values{"verdict": {store.VerdictLucky}, "note": {"1 of 4"}, "pair": {"2"}}
	req, _ := http.NewRequest(http.MethodPost, s.url+problem+"/review", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.url)
	req.AddCookie(acct.Cookie)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "pair=2") {
		t.Fatalf("review: HTTP %d to %q; want 303 back to pair 2", resp.StatusCode, resp.Header.Get("Location"))
	}
	all, err := s.st.Reviews(ctx, sc.ID)
	if err != nil || len(all) != 1 || all.Of(sc.Runs[2].ID)[p0].Verdict != store.VerdictLucky {
		t.Fatalf("reviews %+v (%v); want p0 lucky against step-300", all, err)
	}
	if page := get(problem + "?pair=2"); !strings.Contains(page, `data-verdict="lucky"`) {
		t.Error("pair 2's page does not show its verdict")
	}
	if page := get(problem); strings.Contains(page, `data-verdict="lucky"`) {
		t.Error("pair 1's page shows pair 2's verdict")
	}
	// The API counts each pair apart.
	var api struct {
		Pairs []struct {
			Other      string         `json:"other"`
			BaseOnly   int            `json:"base_only"`
			Counts     map[string]int `json:"counts"`
			Unreviewed int            `json:"unreviewed"`
		} `json:"pairs"`
		Reviews []struct {
			Other string `json:"other"`
		} `json:"reviews"`
	}
	if err := json.Unmarshal([]byte(get(fmt.Sprintf("/api/v1/comparisons/%d/reviews", sc.ID))), &api); err != nil {
		t.Fatal(err)
	}
	if len(api.Pairs) != 2 || api.Pairs[0].BaseOnly != 0 || api.Pairs[1].Other != "step-300" || api.Pairs[1].BaseOnly != 1 ||
		api.Pairs[1].Counts[store.VerdictLucky] != 1 || len(api.Reviews) != 1 || api.Reviews[0].Other != "step-300" {
		t.Errorf("API reviews %+v", api)
	}
}

// A shared "every chart" link of a comparison with more than three models
// shows every pair's Venn, and its list of problems only the base model
// solved is per pair.
func TestSharedEveryPairVenn(t *testing.T) {
	s := newServer(t)
	steps := []int{100, 200, 300, 400}
	runs := []store.NewRun{{ModelName: "base", Role: "base"}}
	for i := range steps {
		runs = append(runs, store.NewRun{ModelName: fmt.Sprintf("step-%d", steps[i]), Role: "checkpoint", Step: &steps[i]})
	}
	// p0: the base model and steps 100, 200 solve it, steps 300 and 400 do not.
	sc := storeReady(t, s.st, "five", 0, twoProblems("p0", "What is 1+1?"), runs, 4,
		func(run int, p store.Problem, i int) bool { return p.Key == "p1" || (run < 3 && i == 0) })
	_, token := shareToken(t, s.st, store.ShareLink{ComparisonID: sc.ID, ShowTexts: true})
	resp, err := http.Get(s.url + "/s/" + token)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	for i := 1; i <= 4; i++ {
		if !strings.Contains(page, fmt.Sprintf(`id="venn-%d"`, i)) {
			t.Errorf("shared page lacks pair %d's Venn", i)
		}
	}
	for pair, want := range map[int]bool{1: false, 2: false, 3: true, 4: true} {
		list := page[strings.Index(page, fmt.Sprintf(`class="shared-problems" data-pair="%d"`, pair)):]
		list = list[:strings.Index(list, "</ul>")]
		if got := strings.Contains(list, ">p0<"); got != want {
			t.Errorf("pair %d's base-only list has p0: %v, want %v", pair, got, want)
		}
	}
}

package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// A problem page of more than two models shows the samples of its pair
// (the base model and ?pair='s model, else the first other) and of the
// models ?open= names; every other model's section is closed, with its
// counts, a link that opens the page with it (no script needed) and the
// fragment URL its samples load from. The fragment is the same boxes,
// model text escaped, under the problem page's access rules; through a
// share link only when the link shows texts, with what it redacts.
func TestProblemPageOfManyModels(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	steps := []int{100, 200, 300}
	runs := []store.NewRun{{ModelName: "base", Role: "base"}}
	for i := range steps {
		runs = append(runs, store.NewRun{ModelName: fmt.Sprintf("step-%d", steps[i]), Role: "checkpoint", Step: &steps[i]})
	}
	sc := storeReady(t, s.st, "many", 0, twoProblems("p0", "What is 1+1?"), runs, 20,
		// p0: base 1/20, step-100 0/20 (base-only against it, so a share
		// link lists and shows it), step-200 2/20, step-300 3/20.
		func(run int, p store.Problem, i int) bool {
			return p.Key == "p1" || (run == 0 && i == 0) || (run > 1 && i < run)
		})
	const hostile = `<img src=x onerror="window.__xss=3"> model-three-text`
	p0 := sc.Ps[0].ID
	if _, err := s.st.Pool().Exec(ctx, `UPDATE samples SET completion = $1 WHERE run_id = $2 AND problem_id = $3 AND sample_index = 0`,
		hostile, sc.Runs[3].ID, p0); err != nil {
		t.Fatal(err)
	}
	editor := newAccount(t, s.st, s.url, "editor@lab.org", false, "editor")
	outsider := newAccount(t, s.st, s.url, "outsider@lab.org", false, "")
	if _, err := s.st.CreateProject(ctx, "elsewhere", outsider.ID); err != nil {
		t.Fatal(err)
	}
	getAs := func(a account, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.url+path, nil)
		req.AddCookie(a.Cookie)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	problem := fmt.Sprintf("/comparisons/%d/problems/%d", sc.ID, p0)
	sample := func(model int) string { return fmt.Sprintf(`id="sample-%d-0"`, sc.Runs[model].ID) }
	shows := func(what, page string, want ...int) {
		t.Helper()
		for m := range sc.Runs {
			if got := strings.Contains(page, sample(m)); got != slices.Contains(want, m) {
				t.Errorf("%s: model %d's samples shown %v; want the samples of models %v", what, m, got, want)
			}
		}
	}

	code, page := getAs(editor, problem)
	if code != 200 {
		t.Fatalf("problem page: HTTP %d", code)
	}
	shows("the page", page, 0, 1)
	for m := 2; m < 4; m++ {
		section := fmt.Sprintf(`<details class="model-samples model-closed" id="run-%d" data-model="%d" data-samples="/comparisons/%d/problems/%d/models/%d/samples">`,
			sc.Runs[m].ID, m, sc.ID, p0, m)
		if !strings.Contains(page, section) {
			t.Errorf("model %d: no closed section %s", m, section)
		}
		link := fmt.Sprintf(`href="%s?open=%d#run-%d"`, problem, m, sc.Runs[m].ID)
		if !strings.Contains(page, link) {
			t.Errorf("model %d: no link %s that opens it without script", m, link)
		}
		// Its counts show closed.
		if want := fmt.Sprintf("%d/20 correct", m); !strings.Contains(page, want) {
			t.Errorf("model %d: count %q not on the page", m, want)
		}
	}
	if strings.Contains(page, "model-three-text") {
		t.Error("the page holds the text of a closed model")
	}
	_, page = getAs(editor, problem+"?open=3")
	shows("?open=3", page, 0, 1, 3)
	if strings.Contains(page, `<img src=x`) || !strings.Contains(page, "model-three-text") {
		t.Error("?open=3: model 3's hostile text is not shown as text")
	}
	_, page = getAs(editor, problem+"?pair=2")
	shows("?pair=2", page, 0, 2)
	_, page = getAs(editor, problem+"?pair=9")
	shows("?pair=9 (no such model: the first pair)", page, 0, 1)
	list := url.Values{"pair": {"3"}}.Encode()
	_, page = getAs(editor, problem+"?list="+url.QueryEscape(list))
	shows("a list of pair 3", page, 0, 3)
	// "Show more" of a closed model keeps it open.
	_, page = getAs(editor, problem+"?open=2")
	if more := fmt.Sprintf(`?all=1&amp;open=2#run-%d`, sc.Runs[2].ID); !strings.Contains(page, more) {
		t.Errorf("?open=2: no show-more link keeping model 2 open (%s)", more)
	}

	// The fragment: model 3's boxes, escaped, and nothing of the page.
	fragment := problem + "/models/3/samples"
	code, frag := getAs(editor, fragment)
	if code != 200 || !strings.Contains(frag, sample(3)) || strings.Contains(frag, sample(1)) || strings.Contains(frag, "<html") {
		t.Fatalf("fragment of model 3: HTTP %d\n%.400s", code, frag)
	}
	if strings.Contains(frag, `<img src=x`) || !strings.Contains(frag, "&lt;img src=x") {
		t.Error("the fragment does not escape the model's text")
	}
	if !strings.Contains(frag, "/verdict") {
		t.Error("an editor's fragment has no override form")
	}
	for _, bad := range []string{"/models/4/samples", "/models/x/samples", "/models/-1/samples"} {
		if code, _ := getAs(editor, problem+bad); code != 404 {
			t.Errorf("%s: HTTP %d, want 404", bad, code)
		}
	}
	// Another comparison's problem is not this one's.
	other, _, otherPID := readyComparison(t, s.st, "other", 0, "Other statement")
	if code, _ := getAs(editor, fmt.Sprintf("/comparisons/%d/problems/%d/models/1/samples", sc.ID, sc.Ps[0].ID+100)); code != 404 {
		t.Errorf("a problem of no dataset: HTTP %d, want 404", code)
	}
	if code, _ := getAs(editor, fmt.Sprintf("/comparisons/%d/problems/%d/models/1/samples", other, p0)); code != 404 {
		t.Errorf("this comparison's problem under another comparison: HTTP %d, want 404", code)
	}
	// A member of another project only: 404, as for the page.
	for _, path := range []string{problem, fragment} {
		if code, body := getAs(outsider, path); code != 404 || strings.Contains(body, "model-three-text") {
			t.Errorf("%s as a member of another project: HTTP %d, want 404", path, code)
		}
	}

	// Overriding a closed model's sample comes back with it open.
	form := url.Values{"status": {"incorrect"}}
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/comparisons/%d/runs/%d/problems/%d/samples/0/verdict", s.url, sc.ID, sc.Runs[3].ID, p0),
		strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.url)
	req.AddCookie(editor.Cookie)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := fmt.Sprintf("%s?open=3#sample-%d-0", problem, sc.Runs[3].ID); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
		t.Errorf("override of model 3's sample: HTTP %d to %q; want 303 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}

	// Share links: the same sections; the fragment only with texts.
	_, texts := shareToken(t, s.st, store.ShareLink{ComparisonID: sc.ID, ShowTexts: true})
	_, counts := shareToken(t, s.st, store.ShareLink{ComparisonID: sc.ID})
	code, page = get(t, fmt.Sprintf("%s/s/%s/problems/%d", s.url, texts, p0))
	if code != 200 {
		t.Fatalf("shared problem: HTTP %d", code)
	}
	shows("the shared page", page, 0, 1)
	if want := fmt.Sprintf(`data-samples="/s/%s/problems/%d/models/3/samples"`, texts, p0); !strings.Contains(page, want) {
		t.Errorf("the shared page's closed model 3 does not load from %s", want)
	}
	if want := fmt.Sprintf(`href="/s/%s/problems/%d?open=3#run-%d"`, texts, p0, sc.Runs[3].ID); !strings.Contains(page, want) {
		t.Errorf("the shared page's closed model 3 has no link %s", want)
	}
	_, page = get(t, fmt.Sprintf("%s/s/%s/problems/%d?open=3", s.url, texts, p0))
	shows("the shared page ?open=3", page, 0, 1, 3)
	code, frag = get(t, fmt.Sprintf("%s/s/%s/problems/%d/models/3/samples", s.url, texts, p0))
	if code != 200 || !strings.Contains(frag, sample(3)) || strings.Contains(frag, `<img src=x`) {
		t.Errorf("shared fragment of model 3: HTTP %d\n%.400s", code, frag)
	}
	if strings.Contains(frag, "/verdict") || strings.Contains(frag, "editor@lab.org") {
		t.Error("the shared fragment offers an override form or names who overrode")
	}
	for _, path := range []string{
		fmt.Sprintf("/s/%s/problems/%d/models/3/samples", counts, p0),        // a link without texts
		fmt.Sprintf("/s/%s/problems/%d/models/4/samples", texts, p0),         // no such model
		fmt.Sprintf("/s/%s/problems/%d/models/1/samples", texts, otherPID),   // another comparison's problem
		fmt.Sprintf("/s/%s/problems/%d/models/1/samples", "nosuchtoken", p0), // a guessed token
	} {
		if code, _ := get(t, s.url+path); code != 404 {
			t.Errorf("%s: HTTP %d, want 404", path, code)
		}
	}
}

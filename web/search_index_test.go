package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web"
	"github.com/reach-lab/reach/web/views"
)

// The search in completion texts (issue 28, item 3): a word every
// completion has is confirmed by each problem's first sample, within any
// budget; a query found nowhere reads up to the budget without the
// search index and says the index is building and how many problems it
// did not search to the end; with the index every problem is searched;
// a query too short for trigrams reads the samples; % and _ are literal.
func TestSearchIndexNotes(t *testing.T) {
	f := newFixture(t)
	notes := func(b string) string { return hasIDs(b, "search-building", "search-indexed", "search-short") }
	ctx := context.Background()
	c, err := f.srv.st.GetComparison(ctx, f.cid)
	if err != nil {
		t.Fatal(err)
	}
	get := func(q string) string {
		t.Helper()
		path := fmt.Sprintf("/comparisons/%d?q=%s&in=completions", f.cid, q)
		code, body := f.page("viewer", path)
		if code != 200 {
			t.Fatalf("GET %s: HTTP %d", path, code)
		}
		return body
	}
	// Both problems' completions are "The answer is 2." (8 samples each).
	if b := get("ANSWER+is+2"); notes(b) != "" || !strings.Contains(b, "Completions searched: 2 problems (16 samples)") ||
		!strings.Contains(b, `data-matching="2"`) {
		t.Errorf("within the budget: notes %q\n%s", notes(b), note(b))
	}
	for _, q := range []string{"%25", "_", "%25%25"} {
		if b := get(q); !strings.Contains(b, `data-matching="0"`) || !strings.Contains(b, "Completions searched: 2 problems (16 samples)") {
			t.Errorf("%s, literally: %s", q, note(b))
		}
	}
	restore := web.SetCompletionSearchBudget(10)
	defer restore()
	if b := get("answer+IS"); notes(b) != "" || !strings.Contains(b, "Completions searched: 2 problems (16 samples)") ||
		!strings.Contains(b, `data-matching="2"`) {
		t.Errorf("a word every completion has, budget 10: notes %q\n%s", notes(b), note(b))
	}
	// 4 samples a run: the first of each, then the next 3 do not fit: the
	// first problem is read to the end.
	if b := get("zzzqqq"); notes(b) != "search-building" || !strings.Contains(b, "Completions searched: 1 problems (8 samples)") ||
		!strings.Contains(b, `data-matching="0"`) || !strings.Contains(b, "1 more problems not searched to the end") {
		t.Errorf("found nowhere, beyond the budget, no index: notes %q\n%s", notes(b), note(b))
	}
	for _, r := range c.Runs {
		if _, err := f.srv.st.BuildSearchIndex(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	if b := get("zzzqqq"); notes(b) != "search-indexed" || !strings.Contains(b, `data-matching="0"`) ||
		!strings.Contains(b, "Completions searched: 2 problems (16 samples)") {
		t.Errorf("no match, with the index: notes %q\n%s", notes(b), note(b))
	}
	if b := get("answer+is+3"); notes(b) != "search-indexed" || !strings.Contains(b, `data-matching="0"`) {
		t.Errorf("common words, no match, with the index: notes %q\n%s", notes(b), note(b))
	}
	if b := get("qz"); notes(b) != "search-short" || !strings.Contains(b, "1 more problems not searched to the end") {
		t.Errorf("a 2-letter query found nowhere: notes %q\n%s", notes(b), note(b))
	}
	// Another view of a query searched before (sorted) reads what the
	// first found.
	if b := get("zzzqqq&sort=problem"); !strings.Contains(b, `data-matching="0"`) ||
		!strings.Contains(b, "Completions searched: 2 problems (16 samples)") {
		t.Errorf("a kept search, another view: %s", note(b))
	}
	// Texts with LIKE's wildcards and letters beyond ASCII, in a sample
	// past the counted ones (read to the end, and in the index), found
	// literally and case-insensitively, through the index and without
	// (within the default budget).
	restore()
	if err := f.srv.st.InsertSamples(ctx, []store.Sample{{RunID: c.Runs[0].ID, ProblemID: f.pid, SampleIndex: 100,
		Completion: "Yes: 100% of a_b, ÜNÏCÖDÉ 重新.", Status: store.SampleIncorrect}}); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{"100%25+of": "1", "a_b": "1", "ünïcödé": "1", "%E9%87%8D%E6%96%B0": "1", "a%25b": "0", "100_": "0"} {
		if b := get(q); !strings.Contains(b, `data-matching="`+want+`"`) || !strings.Contains(b, "Completions searched: 2 problems") {
			t.Errorf("%s: want %s problem(s): notes %q\n%s", q, want, notes(b), note(b))
		}
	}
}

// A search of statements and completions (in=both) where every problem
// of the view matched in its statement searches no completion and says
// why, not "0 problems searched".
func TestSearchBothFoundInStatements(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.srv.st.Pool().Exec(ctx, `UPDATE problems SET statement = statement || ' Zebracrossing.' WHERE dataset_id = $1`, f.dataset); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/comparisons/%d?q=ZEBRACROSSING&in=both", f.cid)
	code, b := f.page("viewer", path)
	if code != 200 {
		t.Fatalf("GET %s: HTTP %d", path, code)
	}
	if hasIDs(b, "search-statements") != "search-statements" || !strings.Contains(b, "all 2 problems of this view matched in their statements") ||
		strings.Contains(b, "Completions searched: 0 problems") || !strings.Contains(b, `data-matching="2"`) {
		t.Errorf("every problem found in its statement: %s", note(b))
	}
	// In completions only, the same query is searched there (and found nowhere).
	code, b = f.page("viewer", fmt.Sprintf("/comparisons/%d?q=ZEBRACROSSING&in=completions", f.cid))
	if code != 200 || hasIDs(b, "search-statements") != "" || !strings.Contains(b, "Completions searched: 2 problems") || !strings.Contains(b, `data-matching="0"`) {
		t.Errorf("in completions: HTTP %d, %s", code, note(b))
	}
}

// hasIDs lists which of the element ids body holds.
func hasIDs(body string, ids ...string) string {
	var out []string
	for _, id := range ids {
		if strings.Contains(body, `id="`+id+`"`) {
			out = append(out, id)
		}
	}
	return strings.Join(out, ",")
}

// note is the search note of a page, for failure messages.
func note(body string) string {
	i := strings.Index(body, `id="search-note"`)
	if i < 0 {
		return "(no search note)"
	}
	return body[i:min(len(body), i+600)]
}

// A query too common for the search index (every window of it in every
// text, the whole of it in half the problems) is read within a bound from
// each problem's first samples: the problems found are right, the page
// says why the rest were not searched to the end, and how many.
func TestSearchTooCommonForIndex(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var ps []store.Problem
	for i := range 40 {
		ps = append(ps, store.Problem{Idx: i, Key: fmt.Sprintf("q%d", i), Statement: "s", Reference: "2"})
	}
	x := storeReady(t, f.srv.st, "common words", 0, ps, []store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}, 4,
		func(int, store.Problem, int) bool { return true })
	// Even problems say it; odd ones have each of its windows, not it.
	if _, err := f.srv.st.Pool().Exec(ctx, `UPDATE samples s SET completion = CASE WHEN p.idx % 2 = 0
			THEN 'So the final answer is 2.' ELSE 'So the final, formal answer is 2.' END
		FROM problems p WHERE p.id = s.problem_id AND s.run_id = ANY($1)`, []int64{x.Runs[0].ID, x.Runs[1].ID}); err != nil {
		t.Fatal(err)
	}
	for _, r := range x.Runs {
		if _, err := f.srv.st.BuildSearchIndex(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	defer web.SetMaxIndexCandidates(50)()
	defer web.SetCompletionSearchBudget(80)() // the probe reads 32
	path := fmt.Sprintf("/comparisons/%d?q=The+Final+Answer+Is&in=completions", x.ID)
	code, b := f.page("viewer", path)
	if code != 200 {
		t.Fatalf("GET %s: HTTP %d", path, code)
	}
	if got := hasIDs(b, "search-common", "search-building", "search-indexed", "search-short"); got != "search-common" ||
		!strings.Contains(b, `data-matching="20"`) || !strings.Contains(b, "20 more problems not searched to the end") ||
		!strings.Contains(b, "at most 80 samples read per search, each problem") {
		t.Errorf("too common for the index: notes %q\n%s", got, note(b))
	}
	// Within the bound of candidates, the index decides every problem.
	defer web.SetMaxIndexCandidates(1000)()
	path = fmt.Sprintf("/comparisons/%d?q=the+final+ANSWER+is&in=completions", x.ID)
	if _, b := f.page("viewer", path); hasIDs(b, "search-common", "search-indexed") != "search-indexed" || !strings.Contains(b, `data-matching="20"`) {
		t.Errorf("within the bound: %s", note(b))
	}
}

// A problem page opened from a search in completions links the samples
// that contain the query, per open model, also one past those it shows.
func TestProblemPageTextMatches(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c, err := f.srv.st.GetComparison(ctx, f.cid)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.srv.st.InsertSamples(ctx, []store.Sample{{RunID: c.Runs[0].ID, ProblemID: f.pid, SampleIndex: 100,
		Completion: "Then <b>ZebraNeedle</b> 100% sure.", Status: store.SampleIncorrect}}); err != nil {
		t.Fatal(err)
	}
	page := func(list string) string {
		t.Helper()
		path := fmt.Sprintf("/comparisons/%d/problems/%d", f.cid, f.pid)
		if list != "" {
			path += "?list=" + url.QueryEscape(list)
		}
		code, b := f.page("viewer", path)
		if code != 200 {
			t.Fatalf("GET %s: HTTP %d", path, code)
		}
		return b
	}
	link := fmt.Sprintf("/comparisons/%d/runs/%d/problems/%d/samples/100/text", f.cid, c.Runs[0].ID, f.pid)
	b := page("q=zebraneedle&in=completions&sort=p")
	if !strings.Contains(b, `id="text-matches"`) || !strings.Contains(b, link) || !strings.Contains(b, `id="back-to-list"`) ||
		!strings.Contains(b, fmt.Sprintf(`data-run="%d" data-total="1"`, c.Runs[0].ID)) ||
		!strings.Contains(b, fmt.Sprintf(`data-run="%d" data-total="0"`, c.Runs[1].ID)) {
		t.Errorf("opened from a search for zebraneedle: %s", textMatchesOf(b))
	}
	// Literal and escaped: the query's markup is text, % is no wildcard.
	b = page("q=" + url.QueryEscape("<b>ZEBRANEEDLE</b> 100%") + "&in=both")
	if !strings.Contains(b, link) || !strings.Contains(b, "&lt;b&gt;ZEBRANEEDLE&lt;/b&gt; 100%") || strings.Contains(textMatchesOf(b), "<b>ZEBRA") {
		t.Errorf("a query with markup: %s", textMatchesOf(b))
	}
	if b := page("q=" + url.QueryEscape("100_ sure") + "&in=completions"); !strings.Contains(b, fmt.Sprintf(`data-run="%d" data-total="0"`, c.Runs[0].ID)) {
		t.Errorf("_ matched as a wildcard: %s", textMatchesOf(b))
	}
	// A list over maxList characters, or a query over the table's 200, is
	// dropped whole, never cut to a shorter query (nor a shorter view to
	// move through).
	long := "in=completions&q=" + url.QueryEscape(strings.Repeat("🙂", 200)) + "&sort=" + strings.Repeat("p", 6000)
	if b := page(long); strings.Contains(b, `id="text-matches"`) || strings.Contains(b, `id="back-to-list"`) {
		t.Errorf("a list over the bound: %s", textMatchesOf(b))
	}
	if b := page("in=completions&q=" + url.QueryEscape("ZebraNeedle"+strings.Repeat("x", 200))); strings.Contains(b, `id="text-matches"`) {
		t.Errorf("a query over 200 characters, cut: %s", textMatchesOf(b))
	}
	// A model with more samples of the problem than a page reads is named,
	// not read.
	if _, err := f.srv.st.Pool().Exec(ctx, `UPDATE run_counts SET n = $3 WHERE run_id = $1 AND problem_id = $2`,
		c.Runs[0].ID, f.pid, views.TextMatchesMaxSamples+1); err != nil {
		t.Fatal(err)
	}
	if b := page("q=zebraneedle&in=completions"); !strings.Contains(b, fmt.Sprintf(`data-run="%d" data-total="0" data-skipped`, c.Runs[0].ID)) ||
		!strings.Contains(b, fmt.Sprintf("not searched: %d samples", views.TextMatchesMaxSamples+1)) || strings.Contains(b, link) {
		t.Errorf("a model over the bound: %s", textMatchesOf(b))
	}
	// Not from a search in completions: no list.
	for _, list := range []string{"", "q=zebraneedle", "q=zebraneedle&in=statements", "in=completions"} {
		if b := page(list); strings.Contains(b, `id="text-matches"`) {
			t.Errorf("list %q: the matches shown", list)
		}
	}
}

func textMatchesOf(body string) string {
	i := strings.Index(body, `id="text-matches"`)
	if i < 0 {
		return "(no text matches)"
	}
	return body[i:min(len(body), i+800)]
}

package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/reach-lab/reach/web"
)

// The search in completion texts reads the samples within its budget;
// beyond it, it says the search index is building (and reads the first
// problems' samples meanwhile), uses the index once it is built (every
// problem searched), and says a query too short for trigrams reads the
// samples.
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
	defer web.SetCompletionSearchBudget(10)()
	if b := get("answer+IS"); notes(b) != "search-building" || !strings.Contains(b, "Completions searched: 1 problems (8 samples)") ||
		!strings.Contains(b, `data-matching="1"`) || !strings.Contains(b, "1 more problems not searched") {
		t.Errorf("beyond the budget, no index: notes %q\n%s", notes(b), note(b))
	}
	for _, r := range c.Runs {
		if _, err := f.srv.st.BuildSearchIndex(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	if b := get("answer+IS"); notes(b) != "search-indexed" ||
		!strings.Contains(b, "Completions searched: 2 problems (16 samples)") || !strings.Contains(b, `data-matching="2"`) {
		t.Errorf("with the index: notes %q\n%s", notes(b), note(b))
	}
	if b := get("zzzqqq"); notes(b) != "search-indexed" || !strings.Contains(b, `data-matching="0"`) {
		t.Errorf("no match, with the index:\n%s", note(b))
	}
	if b := get("is"); notes(b) != "search-short" || !strings.Contains(b, "Completions searched: 1 problems (8 samples)") {
		t.Errorf("a 2-letter query: notes %q\n%s", notes(b), note(b))
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

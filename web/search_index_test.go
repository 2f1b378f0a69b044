package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// The search in completion texts says when the search index is building
// (and reads the samples meanwhile), uses the index once it is built, and
// says a query too short for trigrams reads the samples.
func TestSearchIndexNotes(t *testing.T) {
	f := newFixture(t)
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
	has := func(body string, ids ...string) string {
		var out []string
		for _, id := range ids {
			if strings.Contains(body, `id="`+id+`"`) {
				out = append(out, id)
			}
		}
		return strings.Join(out, ",")
	}
	// Both problems' completions are "The answer is 2.".
	if b := get("ANSWER+is+2"); has(b, "search-building", "search-indexed", "search-short") != "search-building" ||
		!strings.Contains(b, "Completions searched: 2 problems (16 samples)") || !strings.Contains(b, `data-matching="2"`) {
		t.Errorf("before the index: notes %q\n%s", has(b, "search-building", "search-indexed", "search-short"), note(b))
	}
	for _, r := range c.Runs {
		if _, err := f.srv.st.BuildSearchIndex(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	if b := get("ANSWER+is+2"); has(b, "search-building", "search-indexed", "search-short") != "search-indexed" ||
		!strings.Contains(b, "Completions searched: 2 problems (16 samples)") || !strings.Contains(b, `data-matching="2"`) {
		t.Errorf("with the index: notes %q\n%s", has(b, "search-building", "search-indexed", "search-short"), note(b))
	}
	if b := get("zzzqqq"); has(b, "search-indexed") != "search-indexed" || !strings.Contains(b, `data-matching="0"`) {
		t.Errorf("no match, with the index:\n%s", note(b))
	}
	if b := get("is"); has(b, "search-building", "search-indexed", "search-short") != "search-short" {
		t.Errorf("a 2-letter query: notes %q\n%s", has(b, "search-building", "search-indexed", "search-short"), note(b))
	}
}

// note is the search note of a page, for failure messages.
func note(body string) string {
	i := strings.Index(body, `id="search-note"`)
	if i < 0 {
		return "(no search note)"
	}
	return body[i:min(len(body), i+600)]
}

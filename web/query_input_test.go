package web_test

import (
	"fmt"
	"testing"
)

// Searches and answer filters with NUL characters or bytes that are not
// UTF-8 (no stored text holds either; Postgres refuses both in a query)
// answer the page, not a server error.
func TestSearchWithNULAndInvalidUTF8(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{
		fmt.Sprintf("/comparisons/%d?q=%%00", f.cid),
		fmt.Sprintf("/comparisons/%d?q=a%%00b&in=completions", f.cid),
		fmt.Sprintf("/comparisons/%d?q=%%ff%%fe&in=both", f.cid),
		fmt.Sprintf("/comparisons/%d?answer=%%00", f.cid),
		fmt.Sprintf("/comparisons/%d/problems/%d?answer=%%00%%ff", f.cid, f.pid),
	} {
		if code, body := f.page("editor", path); code != 200 {
			t.Errorf("GET %s: HTTP %d %.300s", path, code, body)
		}
	}
}

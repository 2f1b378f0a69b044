package views

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reach-lab/reach/internal/store"
)

// The disagreements come 50 a page, each completion cut to its end.
func TestAuditPageOf(t *testing.T) {
	items := make([]store.AuditItem, 120)
	for i := range items {
		items[i].SampleIndex = i
	}
	for _, c := range []struct{ page, first, n, pages int }{{0, 0, 50, 3}, {1, 0, 50, 3}, {3, 100, 20, 3}, {9, 100, 20, 3}} {
		got, pages := VerifierAuditView{Page: c.page}.pageOf(items)
		if len(got) != c.n || got[0].SampleIndex != c.first || pages != c.pages {
			t.Errorf("page %d: %d items from #%d of %d pages; want %d from #%d of %d", c.page, len(got), got[0].SampleIndex, pages, c.n, c.first, c.pages)
		}
	}
	long := strings.Repeat("é", 1000) + `\boxed{7}`
	if got := tail(long); !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, `\boxed{7}`) || len(got) > 1500+len("…") || !utf8.ValidString(got) {
		t.Errorf("tail of %d bytes: %d bytes, valid %v", len(long), len(got), utf8.ValidString(got))
	}
}

package web

import "testing"

// A chart file's name is its scripts' SHA-256 whether or not the memo
// knew them; other scripts, or the same ones of another comparison, or a
// file the cache dropped, are named and kept again.
func TestChartFileNameMemo(t *testing.T) {
	page := func(js string) ([]byte, [][2]int) {
		p := []byte("<p>x</p>" + string(chartScript) + js + "</script><p>y</p>")
		return p, chartSpans(p)
	}
	a, as := page("draw(1)")
	b, bs := page("draw(2)")
	name := chartFileFor(7, a, as)
	if want := chartFileNamed(7, a, as); name != want {
		t.Fatalf("memo name %s, SHA-256 %s", name, want)
	}
	if again := chartFileFor(7, a, as); again != name {
		t.Errorf("the same scripts named %s, then %s", name, again)
	}
	if other := chartFileFor(7, b, bs); other == name || other != chartFileNamed(7, b, bs) {
		t.Errorf("other scripts named %s (first %s)", other, name)
	}
	if f, ok := chartFiles.GetIfPresent(name); !ok || f.comparison != 7 {
		t.Fatalf("chart file %s not kept", name)
	}
	chartFiles.Invalidate(name)
	if again := chartFileFor(7, a, as); again != name {
		t.Errorf("after the file was dropped: %s, want %s", again, name)
	}
	if f, ok := chartFiles.GetIfPresent(name); !ok || f.comparison != 7 {
		t.Errorf("chart file %s not kept again after it was dropped", name)
	}
	if chartFileFor(8, a, as) != name {
		t.Errorf("another comparison's same scripts named differently")
	}
	if f, ok := chartFiles.GetIfPresent(name); !ok || f.comparison != 8 {
		t.Errorf("chart file %s not kept for the comparison that drew it last", name)
	}
}

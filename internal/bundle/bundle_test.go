package bundle_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/bundle"
)

// site is a handler of fixed pages by path.
type site map[string]string

func (s site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, ok := s[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = io.WriteString(w, b)
}

const head = `<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="/static/a.css"><script src="/static/a.js"></script></head>`

// Links become relative to each page's folder and are followed; inline
// scripts become files; each page gets the policy; a stylesheet's fonts
// come along when the server has them.
func TestWriteRewritesAndFollows(t *testing.T) {
	h := site{
		"/s/t/": head + `<body><a href="/s/t/problems/7#samples">p7</a> <a href="/s/t/data/crossover.csv?x=1">csv</a>` +
			`<a href="/admin/users">gone</a> <a href="https://example.com/">out</a>` +
			`<script nonce="abc">` + "\n{draw(1)}" + `</script></body></html>`,
		"/s/t/problems/7":                       head + `<body><a href="/s/t">back</a><a href="/s/t/runs/1/problems/7/samples/0/text">all</a></body></html>`,
		"/s/t/data/crossover.csv":               "k,base\n1,0.5\n",
		"/s/t/runs/1/problems/7/samples/0/text": "the whole <b>text</b>",
		"/static/a.css":                         `@font-face{src:url(fonts/f.woff2) format("woff2"),url(fonts/f.ttf) format("truetype")}`,
		"/static/fonts/f.woff2":                 "font",
		"/static/a.js":                          "app()",
	}
	dir := t.TempDir()
	st, err := bundle.Write(context.Background(), h, "t", bundle.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("no %s: %v", name, err)
		}
		return string(b)
	}
	index := read("index.html")
	for _, want := range []string{`href="problems/7.html#samples"`, `href="data/crossover.csv"`, `href="#">gone`, `href="https://example.com/"`,
		`<script src="charts/index-1.js"></script>`, `<meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="` + bundle.CSP + `">`,
		`href="static/a.css"`, `src="static/a.js"`} {
		if !strings.Contains(index, want) {
			t.Errorf("index.html has no %s:\n%s", want, index)
		}
	}
	if got := read("charts/index-1.js"); got != "\n{draw(1)}" {
		t.Errorf("the chart script file holds %q", got)
	}
	p7 := read("problems/7.html")
	for _, want := range []string{`href="../index.html"`, `href="../texts/1-7-0.txt"`, `href="../static/a.css"`} {
		if !strings.Contains(p7, want) {
			t.Errorf("problems/7.html has no %s:\n%s", want, p7)
		}
	}
	read("static/fonts/f.woff2")
	if _, err := os.Stat(filepath.Join(dir, "static", "fonts", "f.ttf")); err == nil {
		t.Error("a font the server does not have was written")
	}
	if st.Pages != 2 || st.Files != 8 || st.Unlinked != 1 {
		t.Errorf("stats %+v, want 2 pages, 8 files, 1 unlinked", st)
	}
}

// A script or stylesheet outside the bundle's paths, a path that climbs out
// of it, or a page that does not answer 200 fails the bundle.
func TestWriteRefuses(t *testing.T) {
	for name, h := range map[string]site{
		"foreign script": {"/s/t/": head + `<script src="/comparisons/1/charts/x.js"></script>`, "/static/a.css": "", "/static/a.js": ""},
		"climbing":       {"/s/t/": head + `<script src="/static/../../etc/passwd"></script>`, "/static/a.css": "", "/static/a.js": ""},
		"broken link":    {"/s/t/": head + `<a href="/s/t/problems/9">x</a>`, "/static/a.css": "", "/static/a.js": ""},
		"no charset":     {"/s/t/": `<html><head></head></html>`},
	} {
		if _, err := bundle.Write(context.Background(), h, "t", bundle.Discard{}); err == nil {
			t.Errorf("%s: bundled", name)
		}
	}
}

package static

import (
	"io/fs"
	"strings"
	"testing"
)

func TestFSHoldsVendoredFiles(t *testing.T) {
	for _, name := range []string{
		"echarts.min.js", "htmx.min.js", "highlight.min.js", "highlight-github.min.css",
		"katex/katex.min.js", "katex/katex.min.css", "katex/contrib/auto-render.min.js",
		"katex/fonts/KaTeX_Main-Regular.woff2", "licenses/echarts-LICENSE", "licenses/katex-LICENSE",
		"licenses/htmx-LICENSE", "licenses/highlightjs-LICENSE", "VENDOR.md",
	} {
		b, err := fs.ReadFile(FS, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(b) == 0 {
			t.Errorf("%s is empty", name)
		}
	}
	err := fs.WalkDir(FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, ".go") {
			t.Errorf("Go source %s is embedded", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The CSS asks for fonts relative to itself; every woff2 it names must be embedded.
func TestKatexCSSFontsPresent(t *testing.T) {
	css, err := fs.ReadFile(FS, "katex/katex.min.css")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, part := range strings.Split(string(css), "url(")[1:] {
		ref := part[:strings.IndexByte(part, ')')]
		if !strings.HasSuffix(ref, ".woff2") {
			continue
		}
		n++
		if _, err := fs.Stat(FS, "katex/"+ref); err != nil {
			t.Errorf("katex.min.css references %s: %v", ref, err)
		}
	}
	if n < 10 {
		t.Errorf("found only %d woff2 references in katex.min.css", n)
	}
}

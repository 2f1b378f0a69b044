package web_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/web"
)

// The browser test: the bundle opened from file:// draws the
// crossover chart and opens a problem page, with no request to anything but
// its own files and no console error.
func TestBundleBrowserFromFiles(t *testing.T) {
	dir, _, _ := bundledComparison(t, web.BundleOptions{})
	b := newBrowser(t, 90*time.Second)
	var (
		mu     sync.Mutex
		asked  []string // every URL the pages asked for
		failed []string // loads that failed (a policy's block among them)
	)
	err := chromedp.Listen(b.ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			asked = append(asked, e.Request.URL)
		case *network.EventLoadingFailed:
			failed = append(failed, e.ErrorText+" "+string(e.BlockedReason))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	index := "file://" + filepath.ToSlash(dir) + "/index.html"
	b.do(t, "open "+index, chromedp.Navigate(index))
	c := b.waitChart(t, "#crossover-chart")
	if len(c.Series) != 2 || c.Series[0] != "base" || c.Series[1] != "rl" {
		t.Errorf("crossover curves %v, want base and rl", c.Series)
	}
	b.clickAndWait(t, "#all-problems tbody tr:first-child a", regexp.MustCompile(`/problems/[0-9]+\.html$`))
	b.waitFor(t, "the statement typeset by KaTeX", `document.querySelector("#statement .katex") ? "yes" : ""`, 10*time.Second)
	if got := eval[string](t, b, `document.querySelector("#samples").innerText`); !strings.Contains(got, "<script>alert(1)</script>") {
		t.Errorf("the completion's script tag is not shown as text: %q", brief(got))
	}
	if n := eval[int](t, b, `document.querySelectorAll("#samples script").length`); n != 0 {
		t.Errorf("the samples hold %d script elements", n)
	}
	b.do(t, "back to the comparison", chromedp.Click(chromedp.CSS(`.crumbs a`)))
	b.waitLoaded(t, regexp.MustCompile(`/index\.html$`))
	b.checkConsole(t)
	mu.Lock()
	defer mu.Unlock()
	if len(asked) < 5 {
		t.Errorf("only %d requests seen: %v", len(asked), asked)
	}
	for _, u := range asked {
		if !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
			t.Errorf("a bundled page asked for %s", u)
		}
	}
	for _, f := range failed {
		t.Errorf("a load failed: %s", f)
	}
}

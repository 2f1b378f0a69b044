package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/benchdata"
)

// The cost chart at a phone's width and a desktop's, on a generated
// comparison whose samples carry token counts (300 to 1,000 each, n = 64):
// drawn, every model named in its legend, no text over another, the page
// no wider than the window; the tooltip names k and the tokens.
func TestBrowserCostChart(t *testing.T) {
	a := startApp(t)
	ctx := context.Background()
	id, _, err := benchdata.Create(ctx, a.st, benchdata.Spec{Models: 3, N: 64, Problems: 40, Texts: true, Seed: 5}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, 2*time.Minute)
	b.signIn(t, a)
	for _, size := range [][2]int64{{390, 844}, {1280, 900}} {
		w, h := size[0], size[1]
		b.do(t, fmt.Sprintf("viewport %d×%d", w, h), chromedp.EmulateViewport(w, h))
		at := fmt.Sprintf("%d px", w)
		b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
		b.waitReport(t)
		st := b.waitChart(t, "#cost-chart")
		if len(st.Series) != 3 || st.Points[0] != 64 {
			t.Errorf("%s: cost chart series %v with %v points; want 3 models, 64 ks each", at, st.Series, st.Points)
		}
		b.settle(t)
		b.checkFits(t, at)
		chartID := fmt.Sprintf("cost_c%d", id)
		found := false
		for _, c := range b.chartLayouts(t) {
			if c.ID != chartID {
				continue
			}
			found = true
			for _, p := range c.Layout.Problems(c.Names) {
				t.Errorf("%s: %s (%s)", at, p, c.Layout.Describe())
			}
			for _, p := range eval[[]string](t, b, fmt.Sprintf(`(%s)(document.getElementById(%q))`, textOverlapsJS, chartID)) {
				t.Errorf("%s: %s", at, p)
			}
		}
		if !found {
			t.Fatalf("%s: no chart %s on the page", at, chartID)
		}
		b.screenshotOf(t, "#cost", fmt.Sprintf("cost-%d", w))
	}
	// The tooltip at the base model's fourth point: k = 4 and its tokens.
	tip := eval[string](t, b, fmt.Sprintf(`(() => {
		const div = document.getElementById(%q), inst = echarts.getInstanceByDom(div);
		inst.dispatchAction({type: "showTip", seriesIndex: 0, dataIndex: 3});
		const p = inst.getOption().series[0].data[3];
		const tipEl = [...div.querySelectorAll("div")].find(d => d.innerText.includes("tokens per problem"));
		return (tipEl ? tipEl.innerText : "") + "|" + Math.round(p[0]).toLocaleString("en-US");
	})()`, fmt.Sprintf("cost_c%d", id)))
	text, tokens, _ := strings.Cut(tip, "|")
	if !strings.Contains(text, "at k = 4, "+tokens+" tokens per problem") {
		t.Errorf("tooltip %q; want pass@4 with k = 4 and %s tokens per problem", text, tokens)
	}
	b.checkConsole(t)
}

package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/replay"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// xssToken is the last replay token of base p3 #3 in debateBrowserSamples
// (36 characters: log-probability −3.6 under the base replay server).
const xssToken = `onerror="window.__xss='completion'">`

// Issue 26 in the browser: set up the RL model's scoring endpoint next to
// the base model's (two replay servers; the RL one favours "Three" and the
// hostile token, giving them log-probability −0.01), test it, start it on
// the base-only and RL-only problems (p3 only), open p3's token view of RL
// #0, hover a token and see both models' alternatives, open the critical
// positions, and read the aggregates on the comparison page. Figures by
// hand in the comments; model output stays text.
func TestBrowserTokenDivergence(t *testing.T) {
	a := startApp(t)
	cid, pids := debateBrowserFixture(t, a.st)
	c, err := a.st.GetComparison(context.Background(), cid)
	if err != nil {
		t.Fatal(err)
	}
	baseRun := c.Runs[0].ID
	base := httptest.NewServer(replay.New(nil, replay.Options{Latency: 5 * time.Millisecond, Logprobs: replay.LogprobsPrompt}))
	t.Cleanup(base.Close)
	rl := httptest.NewServer(replay.New(nil, replay.Options{Latency: 5 * time.Millisecond, Logprobs: replay.LogprobsEcho,
		Favour: []string{"Three", xssToken}}))
	t.Cleanup(rl.Close)

	b := newBrowser(t, 3*time.Minute)
	b.signIn(t, a)
	page := fmt.Sprintf("%s/comparisons/%d", a.url, cid)
	b.open(t, page)
	b.waitReport(t)
	if s := b.waitFor(t, "the empty aggregates", `(() => { const e = document.getElementById("token-agg-empty"); return e ? e.innerText : ""; })()`, 20*time.Second); !strings.Contains(s, "No completion is scored token by token yet") {
		t.Errorf("aggregates before scoring: %q", s)
	}
	for _, ep := range []struct{ purpose, url, model string }{{"score", base.URL + "/v1", "base-model"}, {"tokens", rl.URL + "/v1", "rl-model"}} {
		form := "#" + ep.purpose + "-form"
		b.do(t, "set up "+ep.purpose,
			chromedp.SetValue(chromedp.CSS(form+" input[name=base_url]"), ep.url),
			chromedp.SetValue(chromedp.CSS(form+" input[name=model]"), ep.model))
		b.submitAndWait(t, "#"+ep.purpose+"-save")
	}
	b.do(t, "test token scoring", chromedp.Click(chromedp.CSS("#tokens-test-button")))
	got := b.waitFor(t, "the token test", `document.getElementById("tokens-test").innerText`, 30*time.Second)
	if !strings.Contains(got, "Token scoring works") || !strings.Contains(got, `top-5 alternatives through "echo"`) ||
		!strings.Contains(got, `vLLM's "prompt_logprobs"`) {
		t.Fatalf("token test: %q", got)
	}
	b.submitAndWait(t, "#tokens-start")
	b.waitFor(t, "token scoring finished", `(() => {
		const s = document.getElementById("tokens-state");
		return s && s.innerText === "finished" ? "yes" : "";
	})()`, time.Minute)
	// p3 is the only RL-only problem: 4 base and 4 RL samples.
	if p := eval[string](t, b, `document.getElementById("tokens-progress").innerText`); p != "8 of 8 samples" {
		t.Errorf("token progress %q", p)
	}

	b.open(t, fmt.Sprintf("%s/comparisons/%d/problems/%d", a.url, cid, pids["p3"]))
	links := eval[[]string](t, b, `[...document.querySelectorAll("#token-samples a.token-link")].map(a => a.innerText.trim())`)
	if strings.Join(links, ",") != "base #0,base #1,base #2,base #3,rl #0,rl #1,rl #2,rl #3" {
		t.Fatalf("token links %q", links)
	}
	b.submitAndWait(t, `#token-samples li:nth-child(5) a`)
	// RL #0 "Three threes make nine. 9": 9 tokens, base −0.1 a character (sum
	// −2.5), RL the same but "Three" at −0.01 (sum −2.01): perplexities
	// e^(2.5/9) = 1.320 and e^(2.01/9) = 1.250; no |Δ| above ln 2.
	for id, want := range map[string]string{"ppl-base": "1.320", "ppl-rl": "1.250", "token-share": "0.00%"} {
		if s := eval[string](t, b, fmt.Sprintf(`document.getElementById(%q).innerText`, id)); s != want {
			t.Errorf("%s = %q, want %q", id, s, want)
		}
	}
	if cls := eval[[]string](t, b, `[...document.querySelectorAll("#token-text .tk")].slice(0, 3).map(s => s.className)`); strings.Join(cls, ",") != "tk p2,tk,tk" {
		t.Errorf("shading of the first tokens %q, want tk p2 (Δ 0.49), tk, tk", cls)
	}
	b.do(t, "hover Three", chromedp.Evaluate[chromedp.Void](`document.querySelector("#token-text .tk").dispatchEvent(new MouseEvent("mouseover", {bubbles: true}))`))
	tip := b.waitFor(t, "the hover card", `(() => { const t = document.getElementById("token-tip"); return t && !t.hidden ? t.innerText : ""; })()`, 10*time.Second)
	for _, want := range []string{`#0 "Three"`, "log p base -0.500 · log p RL -0.010 · Δ 0.490", "base (base-model)", "RL (rl-model)", "alt1", "alt4"} {
		if !strings.Contains(tip, want) {
			t.Errorf("hover card lacks %q:\n%s", want, tip)
		}
	}
	// alt1 under the base model: log((1 − e^−0.5)/2) = −1.6264.
	if !strings.Contains(tip, "-1.626") {
		t.Errorf("hover card lacks the base model's alt1 log-probability -1.626:\n%s", tip)
	}
	b.do(t, "open the critical positions", chromedp.Click(chromedp.CSS("#critical summary")))
	rows := eval[[]string](t, b, `[...document.querySelectorAll("#critical tbody tr")].map(r => r.innerText.replace(/\s+/g, " ").trim())`)
	// Only "Three" diverges: the list holds it alone.
	if len(rows) != 1 || !strings.HasPrefix(rows[0], "0 Three threes make nine. 9 -0.500 -0.010 0.490") {
		t.Errorf("critical rows %q", rows)
	}
	if eval[bool](t, b, `document.querySelector("#critical").open && document.querySelector("#critical tbody tr").offsetParent !== null`) != true {
		t.Error("the critical list did not open")
	}

	// The hostile completion's view: text, not markup.
	b.open(t, fmt.Sprintf("%s/comparisons/%d/runs/%d/problems/%d/samples/3/tokens", a.url, cid, baseRun, pids["p3"]))
	if n := eval[int](t, b, `document.querySelectorAll("#token-text img").length`); n != 0 {
		t.Errorf("%d img elements in the token view", n)
	}
	b.do(t, "hover the hostile token", chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll("#token-text .tk")].pop().dispatchEvent(new MouseEvent("mouseover", {bubbles: true}))`))
	tip = b.waitFor(t, "the hover card", `(() => { const t = document.getElementById("token-tip"); return t && !t.hidden ? t.innerText : ""; })()`, 10*time.Second)
	if !strings.Contains(tip, "Δ 3.590") {
		t.Errorf("hostile token: %q", tip)
	}

	// Aggregates: p3's 8 samples, 3 + 9 (base) + 9 + 7 + 3 + 3 (RL) = 34
	// positions; Δ ≠ 0 at RL #0 and #1's "Three" (0.49 each) and base #3's
	// hostile token (−0.01 + 3.6 = 3.59), the only one above ln 2: 1/34 =
	// 2.94%. Correct: RL #0 alone, 9 positions, mean |Δ| 0.49/9 = 0.054;
	// incorrect: 25, (0.49 + 3.59)/25 = 0.163, 1/25 = 4.00%.
	b.open(t, page)
	share := b.waitFor(t, "the aggregates", `(() => { const e = document.getElementById("token-agg-share"); return e ? e.innerText : ""; })()`, 20*time.Second)
	if !strings.HasPrefix(share, "2.94% of positions") {
		t.Errorf("share %q", share)
	}
	groups := eval[[]string](t, b, `[...document.querySelectorAll("#token-groups tr")].slice(1).map(r => r.innerText.replace(/\s+/g, " ").trim())`)
	if strings.Join(groups, "|") != "correct 1 9 0.054 0.00%|incorrect 7 25 0.163 4.00%" {
		t.Errorf("groups %q", groups)
	}
	hist := eval[[]string](t, b, `[...document.querySelectorAll("#token-hist tr")].map(r => r.innerText.replace(/\s+/g, " ").trim())`)
	if len(hist) != 8 || hist[0] != "0 – 0.01 31" || hist[3] != "0.25 – 0.5 2" || hist[6] != "2 – 4 1" {
		t.Errorf("histogram %q", hist)
	}
	freq := eval[[]string](t, b, `[...document.querySelectorAll("#token-frequent tbody tr")].map(r => r.innerText.trim())`)
	if len(freq) == 0 || !strings.Contains(freq[0], xssToken) {
		t.Errorf("frequent critical tokens %q", freq)
	}
	if x := eval[any](t, b, `window.__xss === undefined ? null : window.__xss`); x != nil {
		t.Errorf("model output ran as markup: %v", x)
	}
}

// A 32,768-token completion's token view in chromium: every token is a
// span, the hover card works at the far end, and the timings are logged
// (a measurement, not a timed assertion; the README quotes it):
// go test ./web -run TestBrowserTokenView32k -v
func TestBrowserTokenView32k(t *testing.T) {
	a := startApp(t)
	ctx := context.Background()
	cid, pids := debateBrowserFixture(t, a.st)
	c, err := a.st.GetComparison(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	const n = 32768
	var text strings.Builder
	for i := range n {
		fmt.Fprintf(&text, " w%d", i%997)
	}
	text0 := text.String()
	rid := c.Runs[1].ID
	if err := a.st.InsertSamples(ctx, []store.Sample{{RunID: rid, ProblemID: pids["p1"], SampleIndex: 4, Completion: text.String(),
		Status: store.SampleIncorrect}}); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{store.RoleBase, store.RoleRL} {
		x := store.TokenScore{RunID: rid, ProblemID: pids["p1"], SampleIndex: 4, Role: role, Model: role, Method: "echo", TopK: 5}
		for i := range n {
			tok := fmt.Sprintf(" w%d", i%997)
			lp := float32(-0.1 * float64(1+i%7))
			if role == store.RoleBase && i%50 == 0 {
				lp -= 2
			}
			x.Tokens = append(x.Tokens, tok)
			x.Logprobs = append(x.Logprobs, lp)
			x.TopTokens = append(x.TopTokens, tok, " a", " b", " c", " d")
			x.TopLogprobs = append(x.TopLogprobs, lp, -2, -3, -4, -5)
		}
		if err := a.st.SaveTokenScore(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowser(t, 2*time.Minute)
	b.signIn(t, a)
	start := time.Now()
	b.open(t, fmt.Sprintf("%s/comparisons/%d/runs/%d/problems/%d/samples/4/tokens", a.url, cid, rid, pids["p1"]))
	// Force layout of the whole text before reading the clock.
	spans := eval[int](t, b, `(() => { document.body.offsetHeight; return document.querySelectorAll("#token-text .tk").length; })()`)
	wall := time.Since(start)
	// Virtualised: the first two blocks of 512 come as spans, the rest as
	// text until they near the screen.
	if spans != 2*views.TokenChunk {
		t.Fatalf("%d token spans at first, want %d", spans, 2*views.TokenChunk)
	}
	if text := eval[int](t, b, `document.getElementById("token-text").innerText.length`); text < len(text0)-n { // white space may fold
		t.Errorf("the text holds %d characters, want about %d", text, len(text0))
	}
	timing := eval[map[string]float64](t, b, `(() => { const e = performance.getEntriesByType("navigation")[0];
		return {response: e.responseEnd, dom: e.domContentLoadedEventEnd, load: e.loadEventEnd}; })()`)
	// Δ = 2 at every 50th token: 656 positions above ln 2 of 32,768 = 2.00%.
	if s := eval[string](t, b, `document.getElementById("token-share").innerText`); s != "2.00%" {
		t.Errorf("share %q", s)
	}
	scrollStart := time.Now()
	b.do(t, "scroll to the end", chromedp.Evaluate[chromedp.Void](`document.querySelector("#token-text .tok-chunk:last-child").scrollIntoView()`))
	b.waitFor(t, "the last block as spans", `(() => { const c = document.querySelector("#token-text .tok-chunk:last-child");
		return c && !c.classList.contains("lazy") && c.querySelectorAll(".tk").length === 512 ? "yes" : ""; })()`, 20*time.Second)
	scrolled := time.Since(scrollStart)
	// Every 50th token is shaded p4 (base −2 lower: Δ = +2), in the upgraded block too: 32,750 is one.
	if cls := eval[string](t, b, `document.querySelector("#token-text .tok-chunk:last-child").children[32750 - 32256].className`); cls != "tk p4" {
		t.Errorf("token 32,750 shaded %q, want tk p4", cls)
	}
	b.do(t, "hover the last token", chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll("#token-text .tk")].pop().dispatchEvent(new MouseEvent("mouseover", {bubbles: true}))`))
	hoverStart := time.Now()
	tip := b.waitFor(t, "the hover card", `(() => { const t = document.getElementById("token-tip"); return t && !t.hidden ? t.innerText : ""; })()`, 20*time.Second)
	if !strings.Contains(tip, fmt.Sprintf("#%d ", n-1)) {
		t.Errorf("hover card of the last token: %q", tip)
	}
	t.Logf("32k-token view: response end %.0f ms, DOMContentLoaded %.0f ms, load %.0f ms after navigation start; open + layout %v; "+
		"last block shaded %v after scrolling; hover card %v after",
		timing["response"], timing["dom"], timing["load"], wall.Round(time.Millisecond), scrolled.Round(time.Millisecond),
		time.Since(hoverStart).Round(time.Millisecond))
}

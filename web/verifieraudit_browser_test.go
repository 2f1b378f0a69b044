package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/replay"
	"github.com/reach-lab/reach/internal/store"
)

// auditBrowserLabels: the replay judge's answers to the verifier audit. Two
// disagreements are planted: base p3 #3 (hostile markup, graded incorrect;
// the judge says correct) and RL p3 #0 (graded correct; the judge says
// incorrect); two agreements; every other sample gets "unsure".
var auditBrowserLabels = []replay.JudgeLabel{
	{Completion: `no idea <img src=x onerror="window.__xss='completion'">`, Verdict: "correct", Reason: `reads <b>9</b>`},
	{Completion: "Three threes make nine. 9", Verdict: "incorrect", Reason: "the answer is not 9"},
	{Completion: "Two plus three is five. 5", Verdict: "correct", Reason: "5 = 5"},
	{Completion: "Five: 5", Verdict: "correct", Reason: "5 = 5"},
}

// The verifier audit in the browser: from the comparison page's Debate
// section to the audit page, the request count shown before starting (and
// recounted for another m), progress until finished, per-model rates, the
// flip, and the two disagreements reviewed with one click each (accept the
// judge's: a verdict override; keep Reach's). Model and judge output is
// text: the hostile completion and reason run nothing.
func TestBrowserVerifierAudit(t *testing.T) {
	a := startApp(t)
	cid, pids := debateBrowserFixture(t, a.st)
	judge := httptest.NewServer(replay.New(nil, replay.Options{Latency: 10 * time.Millisecond, Judge: auditBrowserLabels}))
	t.Cleanup(judge.Close)
	ctx := context.Background()
	if err := a.st.PutDebateEndpoint(ctx, store.DebateEndpoint{ComparisonID: cid, Purpose: store.PurposeJudge,
		Endpoint: store.Endpoint{BaseURL: judge.URL + "/v1", Model: "judge", Style: "chat", MaxConcurrency: 4}, Template: "default", MaxTokens: 64}, false); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, 3*time.Minute)
	b.signIn(t, a)
	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, cid))
	b.waitReport(t)
	auditPage := regexp.MustCompile(fmt.Sprintf(`^/comparisons/%d/verifier-audit(\?.*)?$`, cid))
	b.clickAndWait(t, "#verifier-audit-link a", auditPage)

	// p3 is RL-only: its 7 incorrect samples (base 4, RL 3) are deciding; 17 others.
	cost := func() string { return eval[string](t, b, `document.getElementById("audit-cost").innerText`) }
	if c := cost(); !strings.Contains(c, "random sample of 200 sends the judge 24 requests") || !strings.Contains(c, "7 deciding samples") {
		t.Errorf("cost before starting: %q", c)
	}
	b.do(t, "m = 5", chromedp.SetValue(chromedp.CSS("#audit-m"), "5"))
	b.clickAndWait(t, "#audit-count", regexp.MustCompile(`[?&]m=5`))
	if c := cost(); !strings.Contains(c, "random sample of 5 sends the judge 12 requests") || !strings.Contains(c, "5 of the 17 others") {
		t.Errorf("cost with m = 5: %q", c)
	}
	if s := eval[string](t, b, `document.getElementById("audit-start").innerText`); s != "Start the audit (12 requests)" {
		t.Errorf("start button %q", s)
	}
	b.do(t, "m = 17", chromedp.SetValue(chromedp.CSS("#audit-m"), "17"))
	b.clickAndWait(t, "#audit-count", regexp.MustCompile(`[?&]m=17`))
	b.submitAndWait(t, "#audit-start")
	// The page polls itself while the audit runs.
	b.waitFor(t, "the audit finished", `(() => {
		const s = document.getElementById("audit-state");
		return s && s.innerText === "finished" ? "yes" : "";
	})()`, time.Minute)
	b.waitFor(t, "the figures", `document.getElementById("audit-disagreements") ? "yes" : ""`, 15*time.Second)
	if s := eval[string](t, b, `document.getElementById("audit-answered").innerText`); s != "24 of 24 samples answered" {
		t.Errorf("progress %q", s)
	}
	// Base: 2 definite verdicts, 1 disagreement (deciding): 1/2 = 50.0% [9.5%, 90.5%] (Wilson);
	// its random sample 0/1, [0, z²/(1+z²) = 79.3%]. RL: 1/2 overall and in the random sample.
	rates := eval[[]string](t, b, `[...document.querySelectorAll("#audit-models tbody tr")].map(r => r.innerText.replace(/\s+/g, " ").trim())`)
	if len(rates) != 2 || rates[0] != "base 12 12 10 0 1 1/2 = 50.0% [9.5%, 90.5%] 0/1 = 0.0% [0.0%, 79.3%]" ||
		rates[1] != "rl 12 12 10 0 1 1/2 = 50.0% [9.5%, 90.5%] 1/2 = 50.0% [9.5%, 90.5%]" {
		t.Errorf("rates %q", rates)
	}
	flip := func() string {
		return eval[string](t, b, `document.querySelector("#audit-flips .audit-flip").innerText`)
	}
	if f := flip(); !regexp.MustCompile(`^k\* none \[none ≤ 4, none ≤ 4\] → 2\.0 \[(\d\.\d|none ≤ 4), none ≤ 4\], base-only 0 → 1, RL-only 1 → 0$`).MatchString(f) {
		t.Errorf("flip %q", f)
	}
	items := eval[[]string](t, b, `[...document.querySelectorAll("#audit-disagreements tr.audit-item")].map(r => r.id)`)
	if len(items) != 2 {
		t.Fatalf("disagreements %v", items)
	}
	baseRow, rlRow := "#"+items[0], "#"+items[1]
	if s := eval[string](t, b, `document.querySelector("`+baseRow+` .audit-completion").innerText`); s != `no idea <img src=x onerror="window.__xss='completion'">` {
		t.Errorf("completion shown %q: want the text as it is", s)
	}
	if s := eval[string](t, b, `document.querySelector("`+baseRow+` .audit-judge").innerText`); s != "correct: reads <b>9</b>" {
		t.Errorf("judge column %q", s)
	}
	if s := eval[string](t, b, `document.querySelector("`+rlRow+` .audit-reach").innerText`); !strings.HasPrefix(s, "correct") {
		t.Errorf("Reach column of the RL sample %q", s)
	}
	href := eval[string](t, b, `document.querySelector("`+baseRow+` a").getAttribute("href")`)
	if !strings.HasPrefix(href, fmt.Sprintf("/comparisons/%d/problems/%d#sample-", cid, pids["p3"])) {
		t.Errorf("sample link %q", href)
	}

	b.screenshot(t, "verifier-audit")
	// Accept the judge's verdict on the base sample: an override; p3 is solved by both.
	b.submitAndWait(t, baseRow+" .audit-accept")
	if s := eval[string](t, b, `document.querySelector("`+baseRow+` .audit-resolution").innerText`); s != "judge's verdict accepted by admin@reach.test (verdict override)" {
		t.Errorf("after accepting: %q", s)
	}
	if f := flip(); !regexp.MustCompile(`^k\* none \[none ≤ 4, none ≤ 4\] → 2\.0 \[(\d\.\d|none ≤ 4), none ≤ 4\], base-only 0 → 1, RL-only 0 → 0$`).MatchString(f) {
		t.Errorf("flip after accepting %q", f)
	}
	// Keep Reach's verdict on the RL sample: nothing is left to flip.
	b.submitAndWait(t, rlRow+" .audit-keep")
	if f := flip(); f != "no change" {
		t.Errorf("flip after keeping %q", f)
	}
	if d := eval[bool](t, b, `document.querySelector("`+rlRow+` .audit-keep").disabled`); !d {
		t.Error("the chosen button is not disabled")
	}

	// The API has the same figures.
	b.open(t, fmt.Sprintf("%s/api/v1/comparisons/%d/verifier-audit", a.url, cid))
	api := eval[string](t, b, `(() => { const x = JSON.parse(document.body.innerText);
		return [x.state, x.items, x.answered, x.models[0].rate.k, x.models[0].rate.n, x.pairs[0].label, x.disagreements.length,
			x.disagreements[0].resolution, x.disagreements[1].resolution].join("|"); })()`)
	if api != "finished|24|24|1|2|no change|2|judge|reach" {
		t.Errorf("API: %q", api)
	}

	// The override is the existing kind: the audit log and the problem page show it.
	b.open(t, fmt.Sprintf("%s/comparisons/%d/audit", a.url, cid))
	log := eval[string](t, b, `document.body.innerText`)
	if !strings.Contains(log, "judge's verdict accepted (correct)") || !strings.Contains(log, "Reach's verdict kept (correct)") ||
		!strings.Contains(log, "verifier audit: the judge's verdict accepted") {
		t.Errorf("audit log lacks the audit's entries:\n%s", log)
	}
	b.noScriptRan(t)
	b.checkConsole(t)
}

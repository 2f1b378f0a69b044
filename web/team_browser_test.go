package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/store"
)

// teamPair imports a small pair with texts: base solves t1 (1 of 4), t2
// (1 of 4) and t3 (2 of 4) alone, both solve t4, only the RL model solves
// t5. Completions and names may be hostile (texts[i] is sample i's text).
func teamPair(t *testing.T, a *app, name, base, other string, texts []string) int64 {
	t.Helper()
	line := func(v any) string {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(j) + "\n"
	}
	var dataset string
	for i := 1; i <= 5; i++ {
		dataset += line(map[string]string{"id": fmt.Sprintf("t%d", i), "problem": fmt.Sprintf("Team problem %d: what is $%d+%d$?", i, i, i),
			"answer": fmt.Sprint(2 * i)})
	}
	solves := map[string][2]int{"t1": {1, 0}, "t2": {1, 0}, "t3": {2, 0}, "t4": {3, 2}, "t5": {0, 4}} // correct samples: base, other
	samples := func(m int) string {
		var s string
		for i := 1; i <= 5; i++ {
			pid := fmt.Sprintf("t%d", i)
			for k := range 4 {
				s += line(map[string]any{"problem_id": pid, "sample_index": k, "completion": texts[k%len(texts)], "correct": k < solves[pid][m]})
			}
		}
		return s
	}
	file := func(n, body string) intake.File {
		return intake.File{Name: n, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }}
	}
	id, _, err := intake.Create(context.Background(), a.st, a.client, intake.Spec{Name: name, Dataset: file("team.jsonl", dataset),
		Models: []intake.Model{{Name: base, File: file("base.jsonl", samples(0))}, {Name: other, File: file("rl.jsonl", samples(1))}}})
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t, id, 30*time.Second)
	return id
}

// freshTab opens a tab in a new browser context: no cookies, no session.
func (b *browser) freshTab(t *testing.T) *browser {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("new browser context: %v", err)
	}
	return &browser{ctx: ctx}
}

func (b *browser) vennCount(t *testing.T, region string) string {
	t.Helper()
	return eval[string](t, b, fmt.Sprintf(`document.querySelector('.venn-counts[data-pair="1"] .n-%s').textContent`, region))
}

// Sign in, share a comparison, and open the link in a fresh browser
// context without a session: the crossover chart and headline figures
// show, nothing else of the instance does; the view is counted; once
// revoked the link is gone.
func TestBrowserShareLink(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 90*time.Second)
	b.signIn(t, a)
	id := teamPair(t, a, "team pair", "base", "rl", []string{"The answer is 2.", "I think 3."})

	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
	b.waitReport(t)
	b.clickAndWait(t, "#share-button", regexp.MustCompile(`^/comparisons/\d+/shares$`))
	b.do(t, "label the link and let it expire in 7 days", chromedp.SendKeys(chromedp.CSS(`#share-form input[name="label"]`), "for the workshop"),
		chromedp.SetValue(chromedp.CSS(`#share-form select[name="expires_days"]`), "7"))
	b.do(t, "create a share link", chromedp.Click(chromedp.CSS("#create-share")))
	shareURL := b.waitFor(t, "the new share link", `(document.querySelector("#share-url") || {}).textContent || ""`, 15*time.Second)
	week := time.Now().Add(7 * 24 * time.Hour).UTC().Format("2006-01-02")
	if row := eval[[]string](t, b, `[...document.querySelectorAll("#share-links tbody tr")[0].cells].map(c => c.textContent.trim())`); len(row) < 7 ||
		row[1] != "for the workshop" || !strings.HasPrefix(row[4], week) || row[6] != "live" {
		t.Errorf("the new link's row %q: want label, expiry %s… and live", row, week)
	}
	b.screenshot(t, "share-links")
	if !strings.HasPrefix(shareURL, a.url+"/s/rsh_") {
		t.Fatalf("share URL %q", shareURL)
	}
	embed := eval[string](t, b, `document.querySelector("#embed-snippet").textContent`)
	if !strings.Contains(embed, `<iframe src="`+shareURL+`/embed"`) {
		t.Errorf("embed snippet %q does not frame %s/embed", embed, shareURL)
	}

	f := b.freshTab(t)
	f.open(t, shareURL)
	cs := f.waitChart(t, "#crossover-chart")
	if !slices.Equal(cs.Series, []string{"base", "rl"}) || cs.Points[0] != 4 {
		t.Errorf("shared crossover chart: series %q with %v points, want base and rl, k = 1..4", cs.Series, cs.Points)
	}
	// The owner's page enqueued the statistics: reload until the shared page has the intervals.
	for deadline := time.Now().Add(time.Minute); eval[string](t, f, `document.querySelector("#shared-stats").textContent`) != "Brackets and the bands around the curves are 95% bootstrap intervals (problems resampled, paired across models)."; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("shared page without intervals after a minute: %q", eval[string](t, f, `document.querySelector("#shared-stats").textContent`))
		}
		f.open(t, shareURL)
	}
	f.waitChart(t, "#crossover-chart")
	figures := eval[[][]string](t, f, `Array.from(document.querySelectorAll("#headline tbody tr")).map(r =>
		Array.from(r.cells).map(c => c.textContent.replace(/\s+/g, " ").trim()))`)
	// pass@1: base (1+1+2+3+0)/20 = 35%, rl (0+0+0+2+4)/20 = 30%, each followed by its interval.
	if len(figures) != 2 || !strings.HasPrefix(figures[0][1], "35.00%") || !strings.HasPrefix(figures[1][1], "30.00%") {
		t.Errorf("shared headline %q, want pass@1 35.00%% and 30.00%%", figures)
	}
	f.screenshot(t, "shared-with-intervals")
	// The intervals the owner's page shows: pass@1 and pass@k max of each model, ΔSE of the RL model.
	if n := eval[int](t, f, `document.querySelectorAll("#headline tbody td.num .ci").length`); n != 5 {
		t.Errorf("%d interval brackets in the shared headline, want 5 (pass@1 and pass@4 of both models, ΔSE)", n)
	}
	if bands := eval[int](t, f, `(() => {
		const div = document.querySelector("#crossover-chart [_echarts_instance_]");
		return echarts.getInstanceByDom(div).getOption().series.filter(s => String(s.id).indexOf("band") === 0).length;
	})()`); bands != 4 {
		t.Errorf("shared crossover chart has %d band series, want 4 (2 models × lower and width)", bands)
	}
	// The chart downloads as PNG and as SVG (drawn again by ECharts' SVG renderer).
	img := eval[[]string](t, f, `(() => {
		const div = document.querySelector("#crossover-chart [_echarts_instance_]");
		return [reachChartImage(div, "png").slice(0, 22), reachChartImage(div, "svg"),
			Array.from(document.querySelectorAll("#crossover-chart .chart-images button")).map(b => b.textContent).join(" ")];
	})()`)
	if img[0] != "data:image/png;base64," || !strings.HasPrefix(img[1], "<svg") || !strings.Contains(img[1], ">rl<") || img[2] != "PNG SVG" {
		t.Errorf("chart images: PNG %q, SVG %.80q (names the series: %v), buttons %q", img[0], img[1], strings.Contains(img[1], ">rl<"), img[2])
	}
	if og := eval[string](t, f, `document.querySelector('meta[property="og:title"]').content`); og != "team pair — pass@k crossover, solved sets and histogram" {
		t.Errorf("og:title %q", og)
	}
	if n := eval[int](t, f, `document.querySelectorAll("#who, nav, a[href^='/comparisons'], a[href='/']").length`); n != 0 {
		t.Errorf("the shared page shows %d links or controls of the instance", n)
	}
	if txt := eval[string](t, f, `document.body.innerText`); strings.Contains(txt, "Team problem") {
		t.Error("the shared page shows problem statements though the link does not allow texts")
	}
	// The fresh context has no session: the instance itself asks to sign in.
	f.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
	f.waitLoaded(t, regexp.MustCompile(`^/login\?next=`))

	b.open(t, fmt.Sprintf("%s/comparisons/%d/shares", a.url, id))
	if views := eval[string](t, b, `document.querySelector("#share-links tbody tr .views").textContent`); views != "1" {
		t.Errorf("view count %q, want 1", views)
	}
	b.clickAndWait(t, "#share-links .revoke-share", regexp.MustCompile(`^/shares/\d+/revoke$`))
	b.screenshot(t, "share-revoke-confirm")
	if h := eval[string](t, b, `document.querySelector("h1").textContent`); h != "Revoke share link “for the workshop”?" {
		t.Errorf("revoke confirmation asks %q", h)
	}
	if resp, err := chromedp.Run(f.ctx, chromedp.NavigateResponse(shareURL)); err != nil || resp.Status != 200 {
		t.Errorf("the link while the owner is only asked: %v %v, want HTTP 200", resp, err)
	}
	b.clickAndWait(t, "#confirm-revoke", regexp.MustCompile(`^/comparisons/\d+/shares$`))
	b.waitFor(t, "the revoked state", `(() => { const r = document.querySelector("#share-links tbody tr"); return r && r.textContent.includes("revoked") ? "yes" : ""; })()`, 10*time.Second)
	resp, err := chromedp.Run(f.ctx, chromedp.NavigateResponse(shareURL))
	if err != nil || resp.Status != 404 {
		t.Errorf("revoked link in the fresh context: %v %v, want HTTP 404", resp, err)
	}
	b.checkConsole(t)
}

// Review two base-only problems with the verdict buttons and j, then
// override a sample's verdict and see the Venn count change.
func TestBrowserReviewAndOverride(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 90*time.Second)
	b.signIn(t, a, "reviewer@reach.test")
	id := teamPair(t, a, "review pair", "base", "rl", []string{"The answer is 2.", "I think 3.", "Maybe 5.", "Surely 7."})
	b.open(t, fmt.Sprintf("%s/comparisons/%d?region=base-only#problems", a.url, id))
	b.waitReport(t)
	if got := b.vennCount(t, "base-only"); got != "3" {
		t.Fatalf("Venn base-only %q, want 3", got)
	}
	problemKey := func() string { return eval[string](t, b, `document.querySelector("h1").textContent.trim()`) }
	verdict := func(v string) {
		t.Helper()
		b.do(t, "click "+v, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#review-form button[value="%s"]`, v))))
		b.waitFor(t, "verdict "+v, fmt.Sprintf(`(() => { const e = document.querySelector("#current-verdict"); return e && e.dataset.verdict === %q ? "ok" : ""; })()`, v), 10*time.Second)
	}
	press := func(key, from string) {
		t.Helper()
		b.do(t, "press "+key, chromedp.KeyEvent(key))
		b.waitFor(t, "another problem after "+key, fmt.Sprintf(`(() => { const h = document.querySelector("h1"); return document.readyState === "complete" && h && h.textContent.trim() !== %q && document.querySelector("#review") ? h.textContent.trim() : ""; })()`, from), 10*time.Second)
	}

	b.clickAndWait(t, `#problem-table tr[data-key="t1"] a`, problemPath)
	if got := eval[string](t, b, `document.querySelector("#current-verdict").dataset.verdict`); got != "" {
		t.Fatalf("t1 starts with verdict %q", got)
	}
	verdict("genuine")
	press("j", "Problem t1")
	if k := problemKey(); k != "Problem t2" {
		t.Fatalf("j from t1 went to %q, want Problem t2", k)
	}
	b.do(t, "write a note", chromedp.SendKeys(chromedp.CSS(`#review-form textarea[name=note]`), "one lucky sample of four"))
	verdict("lucky")
	if n := eval[int](t, b, `document.querySelectorAll("#prev-unreviewed").length`); n != 0 {
		t.Error("t2 offers a previous unreviewed problem, but t1 is reviewed")
	}
	press("J", "Problem t2")
	if k := problemKey(); k != "Problem t3" {
		t.Fatalf("J from t2 went to %q, want Problem t3 (the next unreviewed)", k)
	}
	if s := eval[string](t, b, `document.querySelector("#review-progress").textContent`); !strings.HasPrefix(s, "3 base-only: 1 genuine, 1 lucky, 1 unreviewed") {
		t.Errorf("review progress %q", s)
	}

	// The base-only list shows each verdict with its reviewer and time.
	b.open(t, fmt.Sprintf("%s/comparisons/%d?region=base-only#problems", a.url, id))
	b.waitReport(t)
	cells := eval[map[string]string](t, b, `Object.fromEntries(Array.from(document.querySelectorAll("#problem-table tbody tr")).map(r =>
		[r.dataset.key, r.querySelector(".review-cell").textContent.replace(/\s+/g, " ").trim()]))`)
	if !strings.HasPrefix(cells["t1"], "genuine solve reviewer@reach.test · 20") || !strings.HasPrefix(cells["t2"], "lucky guess reviewer@reach.test · 20") || cells["t3"] != "" {
		t.Errorf("review column %q", cells)
	}
	if s := eval[string](t, b, `document.querySelector("#review-summary").textContent`); !strings.Contains(s, "3 base-only: 1 genuine, 1 lucky, 1 unreviewed") {
		t.Errorf("review summary %q", s)
	}

	// t1's only correct base sample was a verifier mistake: mark it incorrect.
	b.clickAndWait(t, `#problem-table tr[data-key="t1"] a`, problemPath)
	sample := eval[string](t, b, `(() => {
		const d = Array.from(document.querySelectorAll(".model-samples")[0].querySelectorAll("details.sample-correct"));
		return d.length === 1 ? d[0].id : "";
	})()`)
	if sample == "" {
		t.Fatal("t1 does not show exactly one correct base sample")
	}
	b.do(t, "mark the sample incorrect",
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector("#%s .override-form input[name=note]").value = "the verifier misread the answer"`, sample)),
		chromedp.Click(chromedp.CSS("#"+sample+" .override-button")))
	note := b.waitFor(t, "the override on the sample", fmt.Sprintf(`(() => { const n = document.querySelector("#%s .override-note"); return n ? n.textContent.replace(/\s+/g, " ") : ""; })()`, sample), 10*time.Second)
	if !strings.Contains(note, "reviewer@reach.test") || !strings.Contains(note, "was correct, now incorrect") {
		t.Errorf("override note %q", note)
	}
	if cn := eval[string](t, b, `document.querySelector(".model-samples .cn").textContent`); cn != "0/4 correct" {
		t.Errorf("base model on t1 after the override: %q, want 0/4 correct", cn)
	}
	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
	b.waitReport(t)
	if got, neither := b.vennCount(t, "base-only"), b.vennCount(t, "neither"); got != "2" || neither != "1" {
		t.Errorf("after the override: Venn base-only %s, neither %s; want 2 and 1", got, neither)
	}
	// The model's verdict source says a reviewer overrode one of them.
	if src := eval[string](t, b, `document.querySelector('#headline td.quality[data-model="base"]').textContent.replace(/\s+/g, " ").trim()`); !strings.HasPrefix(src, "file, 1 override") {
		t.Errorf("base model's verdict source after one override: %q, want file, 1 override", src)
	}
	if src := eval[string](t, b, `document.querySelector('#headline td.quality[data-model="rl"]').textContent`); strings.Contains(src, "override") {
		t.Errorf("rl model's verdict source %q mentions overrides; none were made", src)
	}
	b.waitChart(t, "#venn-1")
	b.open(t, fmt.Sprintf("%s/comparisons/%d/audit", a.url, id))
	log := eval[string](t, b, `document.querySelector("table.audit").innerText`)
	for _, want := range []string{"sample-verdict", "correct\tincorrect", "the verifier misread the answer", "review: problem verdict", "genuine"} {
		if !strings.Contains(log, want) {
			t.Errorf("audit log lacks %q:\n%s", want, log)
		}
	}
	b.checkConsole(t)
}

// Hostile model output, names and notes stay text on the share page, its
// problem page and embed, and on the review, audit and share pages.
func TestBrowserHostileSharedPages(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 90*time.Second)
	b.signIn(t, a)
	hostile := []string{xssScript, xssImg, xssLink, xssKaTeX}
	id := teamPair(t, a, xssName, xssModel, xssOther, hostile)
	ctx := context.Background()
	c, err := a.st.GetComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := a.st.Problems(ctx, *c.DatasetID, false)
	if err != nil {
		t.Fatal(err)
	}
	t1 := ps[0].ID
	u, err := a.st.UserByEmail(ctx, "admin@reach.test")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.st.SetReview(ctx, store.Review{ComparisonID: id, ProblemID: t1, Verdict: store.VerdictUnsure, Note: xssScript, ReviewerID: u.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.st.OverrideSample(ctx, store.SampleOverride{ComparisonID: id, RunID: c.Runs[0].ID, ProblemID: t1, SampleIndex: 1,
		Status: store.SampleCorrect, UserID: u.ID, Note: xssImg}); err != nil {
		t.Fatal(err)
	}

	// The owner's pages: problem (review note, override note), audit log, shares.
	b.open(t, fmt.Sprintf("%s/comparisons/%d/problems/%d", a.url, id, t1))
	b.noScriptRan(t)
	if note := eval[string](t, b, `document.querySelector("#current-verdict .note").textContent`); note != xssScript {
		t.Errorf("review note shows %q, want the text %q", note, xssScript)
	}
	b.open(t, fmt.Sprintf("%s/comparisons/%d/audit", a.url, id))
	b.noScriptRan(t)
	if txt := eval[string](t, b, `document.querySelector("table.audit").innerText`); !strings.Contains(txt, xssImg) || !strings.Contains(txt, xssScript) {
		t.Errorf("audit log does not show the notes as text:\n%s", txt)
	}
	// Notes written in the editor with every hostile snippet, raw and as markdown links.
	notes := "# Notes\n\n" + strings.Join(hostile, "\n\n") + "\n\n" + xssModel + "\n\n[md](javascript:window.__xss=9)\n\n<b onmouseover=\"window.__xss=10\">b</b>\n"
	b.open(t, fmt.Sprintf("%s/comparisons/%d/notes", a.url, id))
	b.do(t, "write hostile notes", chromedp.SetValue(chromedp.CSS("#notes-text"), notes))
	b.clickAndWait(t, "#save-notes", regexp.MustCompile(`^/comparisons/\d+$`))
	b.waitReport(t)
	b.noScriptRan(t)
	checkNotes := func(b *browser, where string) {
		t.Helper()
		if h := eval[string](t, b, `(document.querySelector("#notes-body h1") || {}).textContent || ""`); h != "Notes" {
			t.Errorf("%s: notes heading %q, want the markdown rendered", where, h)
		}
		if n := eval[int](t, b, `document.querySelectorAll("#notes-body :is(script, img, iframe, object, embed, svg, b), #notes-body [onerror], #notes-body [onclick], #notes-body [onmouseover]").length`); n != 0 {
			t.Errorf("%s: %d live or raw-HTML elements in the notes", where, n)
		}
		if n := eval[int](t, b, `Array.from(document.querySelectorAll("#notes-body [href]")).filter(a => !/^https?:/i.test(a.getAttribute("href"))).length`); n != 0 {
			t.Errorf("%s: %d links in the notes that are not http(s)", where, n)
		}
	}
	checkNotes(b, "comparison page")
	b.screenshot(t, "notes-hostile")
	b.open(t, fmt.Sprintf("%s/comparisons/%d/shares", a.url, id))
	b.do(t, "share with texts and notes", chromedp.Click(chromedp.CSS(`#share-form input[name=show_texts]`)),
		chromedp.Click(chromedp.CSS(`#share-form input[name=show_notes]`)), chromedp.Click(chromedp.CSS("#create-share")))
	shareURL := b.waitFor(t, "the new share link", `(document.querySelector("#share-url") || {}).textContent || ""`, 15*time.Second)
	b.noScriptRan(t)
	if n := eval[int](t, b, `document.querySelectorAll("main iframe, main img").length`); n != 0 {
		t.Errorf("the shares page holds %d live iframes or images (the embed snippet must be text)", n)
	}

	f := b.freshTab(t)
	f.open(t, shareURL)
	f.noScriptRan(t)
	checkNotes(f, "shared page")
	if og := eval[string](t, f, `document.querySelector('meta[property="og:title"]').content`); og != xssName+" — pass@k crossover, solved sets and histogram" {
		t.Errorf("og:title %q does not hold the name as text", og)
	}
	if h := eval[string](t, f, `document.querySelector("h1").textContent`); h != xssName {
		t.Errorf("shared heading %q", h)
	}
	cs := f.waitChart(t, "#crossover-chart")
	if !slices.Equal(cs.Series, []string{xssModel, xssOther}) {
		t.Errorf("shared chart series %q", cs.Series)
	}
	f.clickAndWait(t, fmt.Sprintf(`#problems a[href$="/problems/%d"]`, t1), regexp.MustCompile(`^/s/[^/]+/problems/\d+$`))
	f.noScriptRan(t)
	pres := eval[[]string](t, f, `(() => {
		document.querySelectorAll("details.sample").forEach(d => { d.open = true; });
		return Array.from(document.querySelectorAll("pre.completion")).map(p => p.innerText);
	})()`)
	all := strings.Join(pres, "\n")
	for _, s := range []string{xssScript, xssImg, xssLink} {
		if strings.Count(all, s) != 2 {
			t.Errorf("shared problem shows %q %d times as text, want 2 (once per model)", s, strings.Count(all, s))
		}
	}
	if n := eval[int](t, f, `document.querySelectorAll("pre.completion *:is(img, a, script, iframe, object, embed), [onerror], [onclick]").length`); n != 0 {
		t.Errorf("%d live elements inside shared completions", n)
	}
	if n := eval[int](t, f, `Array.from(document.querySelectorAll("[href]")).filter(a => /^\s*javascript:/i.test(a.getAttribute("href"))).length`); n != 0 {
		t.Errorf("%d javascript: links on the shared problem page", n)
	}
	if n := eval[int](t, f, `document.querySelectorAll(".override-form, #review-form").length`); n != 0 {
		t.Error("the shared problem page has review or override forms")
	}
	f.open(t, shareURL+"/embed")
	f.noScriptRan(t)
	f.waitChart(t, "#crossover-chart")
	b.checkConsole(t)
}

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

	"github.com/reach-lab/reach/internal/examples"
	"github.com/reach-lab/reach/internal/replay"
	"github.com/reach-lab/reach/internal/store"
)

// debateBrowserSamples: three problems, four samples per model, each
// {completion, extracted answer, correct}. Base c: p1 2, p2 1, p3 0; RL c:
// p1 4, p2 2, p3 1 (p3 is RL-only).
var debateBrowserSamples = map[string][][]struct {
	text, answer string
	correct      bool
}{
	"base": {
		{{"Two plus three is five. 5", "5", true}, {"I guess 5", "5", true}, {"2+3=6 so 6", "6", false}, {"7", "7", false}},
		{{"10-4=6 so 6", "6", true}, {"4", "4", false}, {"four: 4", "4", false}, {"14", "14", false}},
		{{"6", "6", false}, {"8", "8", false}, {"10", "10", false}, {`no idea <img src=x onerror="window.__xss='completion'">`, "", false}},
	},
	"rl": {
		{{"Five: 5", "5", true}, {"Adding gives 5, so 5", "5", true}, {"Probably 5", "5", true}, {"It is 5 somehow", "5", true}},
		{{"Six. 6", "6", true}, {"Guessing six, 6", "6", true}, {"16", "16", false}, {"So 16", "16", false}},
		{{"Three threes make nine. 9", "9", true}, {"Three and three: 6", "6", false}, {"six 6", "6", false}, {"Sum: 6", "6", false}},
	},
}

// debateBrowserLabels are the replay judge's verdicts of the answer-correct
// samples; one reason is hostile markup.
var debateBrowserLabels = []replay.JudgeLabel{
	{Completion: "Two plus three is five. 5", Verdict: "valid", Reason: "adds correctly"},
	{Completion: "I guess 5", Verdict: "flawed", Reason: `a guess <img src=x onerror="window.__xss='judge'">`},
	{Completion: "10-4=6 so 6", Verdict: "valid", Reason: "subtracts"},
	{Completion: "Five: 5", Verdict: "valid"}, {Completion: "Adding gives 5, so 5", Verdict: "valid"},
	{Completion: "Probably 5", Verdict: "flawed"}, {Completion: "It is 5 somehow", Verdict: "unsure"},
	{Completion: "Six. 6", Verdict: "valid"}, {Completion: "Guessing six, 6", Verdict: "flawed"},
	{Completion: "Three threes make nine. 9", Verdict: "valid"},
}

// debateBrowserFixture stores the ready comparison of debateBrowserSamples
// and returns its id and the problem ids by key.
func debateBrowserFixture(t *testing.T, st *store.Store) (int64, map[string]int64) {
	t.Helper()
	ctx := context.Background()
	did, err := st.CreateDataset(ctx, "debate", "debate.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.InsertProblems(ctx, did, []store.Problem{{Idx: 0, Key: "p1", Statement: "What is 2+3?", Reference: "5"},
		{Idx: 1, Key: "p2", Statement: "What is 10-4?", Reference: "6"}, {Idx: 2, Key: "p3", Statement: "What is 3*3?", Reference: "9"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishDataset(ctx, did); err != nil {
		t.Fatal(err)
	}
	cid, err := st.CreateComparison(ctx, store.NewComparison{Name: "debate in the browser", DatasetID: did, Status: store.StatusReady,
		Runs: []store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.GetComparison(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := st.Problems(ctx, did, false)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, p := range ps {
		ids[p.Key] = p.ID
	}
	var batch []store.Sample
	for _, run := range c.Runs {
		for i, p := range ps {
			for j, s := range debateBrowserSamples[run.ModelName][i] {
				status := store.SampleIncorrect
				if s.correct {
					status = store.SampleCorrect
				}
				batch = append(batch, store.Sample{RunID: run.ID, ProblemID: p.ID, SampleIndex: j, Completion: s.text, Status: status,
					Extracted: s.answer})
			}
		}
	}
	if err := st.InsertSamples(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for _, run := range c.Runs {
		if err := st.AggregateRun(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		if err := st.SetRunImported(ctx, run.ID, "reach-jsonl", true, "file"); err != nil {
			t.Fatal(err)
		}
		if err := st.SetRunStatus(ctx, run.ID, store.StatusReady, ""); err != nil {
			t.Fatal(err)
		}
	}
	return cid, ids
}

// Issue 15 in the browser: set up a judge and a scoring endpoint (replay
// servers: the judge answers the fixture's verdicts, the scorer serves
// prompt_logprobs), test them, start them, watch them finish, and open the
// CoT-pass@k, perplexity, answer-entropy and support figures; label a
// sample's reasoning and review the RL-only problem. The judge's reasons and
// the completions are shown as text: no hostile snippet runs.
func TestBrowserDebate(t *testing.T) {
	a := startApp(t)
	cid, pids := debateBrowserFixture(t, a.st)
	judge := httptest.NewServer(replay.New(nil, replay.Options{Latency: 20 * time.Millisecond, Judge: debateBrowserLabels}))
	t.Cleanup(judge.Close)
	scorer := httptest.NewServer(replay.New(nil, replay.Options{Latency: 20 * time.Millisecond, Logprobs: replay.LogprobsPrompt}))
	t.Cleanup(scorer.Close)

	b := newBrowser(t, 3*time.Minute)
	b.signIn(t, a)
	page := fmt.Sprintf("%s/comparisons/%d", a.url, cid)
	here := regexp.MustCompile(fmt.Sprintf(`^/comparisons/%d(\?.*)?$`, cid))
	b.open(t, page)
	b.waitReport(t)
	if s := eval[string](t, b, `document.getElementById("judge-state").innerText`); s != "not set up" {
		t.Errorf("judge state %q before set-up", s)
	}

	for _, ep := range []struct{ purpose, url, model, tested string }{
		{"judge", judge.URL + "/v1", "judge", "The judge answered"},
		{"score", scorer.URL + "/v1", "base", "Scoring works"},
	} {
		form := "#" + ep.purpose + "-form"
		b.do(t, "set up the "+ep.purpose,
			chromedp.SetValue(chromedp.CSS(form+" input[name=base_url]"), ep.url),
			chromedp.SetValue(chromedp.CSS(form+" input[name=model]"), ep.model),
			chromedp.SetValue(chromedp.CSS(form+" input[name=max_concurrency]"), "4"))
		b.submitAndWait(t, "#"+ep.purpose+"-save")
		b.do(t, "test the "+ep.purpose, chromedp.Click(chromedp.CSS("#"+ep.purpose+"-test-button")))
		got := b.waitFor(t, "the "+ep.purpose+" test", fmt.Sprintf(`document.getElementById(%q).innerText`, ep.purpose+"-test"), 30*time.Second)
		if !strings.Contains(got, ep.tested) {
			t.Fatalf("%s test: %q, want %q", ep.purpose, got, ep.tested)
		}
		b.submitAndWait(t, "#"+ep.purpose+"-start")
		// The section polls itself while the jobs run.
		b.waitFor(t, ep.purpose+" finished", fmt.Sprintf(`(() => {
			const s = document.getElementById(%q);
			return s && s.innerText === "finished" ? "yes" : "";
		})()`, ep.purpose+"-state"), time.Minute)
		cost := eval[string](t, b, fmt.Sprintf(`document.getElementById(%q).innerText`, ep.purpose+"-cost"))
		if !regexp.MustCompile(`[1-9]\d* prompt tokens.* [1-9]\d* requests`).MatchString(cost) {
			t.Errorf("%s cost: %q", ep.purpose, cost)
		}
	}
	// Judged: every answer-correct sample (base 3, RL 7) in 10 requests;
	// scored: all 24 samples.
	if p := eval[string](t, b, `document.getElementById("judge-progress").innerText`); p != "10 of 10 samples" {
		t.Errorf("judge progress %q", p)
	}
	if p := eval[string](t, b, `document.getElementById("score-progress").innerText`); p != "24 of 24 samples" {
		t.Errorf("scoring progress %q", p)
	}

	b.open(t, page)
	b.waitReport(t)
	cot := b.waitChart(t, "#cot-chart")
	if strings.Join(cot.Series, ",") != "base CoT-pass@k,base pass@k,rl CoT-pass@k,rl pass@k" {
		t.Errorf("CoT chart series %v", cot.Series)
	}
	// Valid samples: base p1 1, p2 1, p3 0; RL p1 2 (unsure is not valid), p2 1, p3 1; n = 4.
	// CoT-pass@4 base 2/3, RL 1; CoT-pass@1 base 1/6 = 16.67%, RL 1/3 = 33.33% (the curves' first points).
	if last := cot.Last; len(last) != 4 || fmt.Sprintf("%.2f", last[0]) != "66.67" || fmt.Sprintf("%.2f", last[2]) != "100.00" {
		t.Errorf("CoT-pass@4 on the chart %v, want 66.67 (base) and 100 (RL)", last)
	}
	rows := eval[[]string](t, b, `[...document.querySelectorAll("#cot-counts tbody tr")].map(r => r.innerText.replace(/\s+/g, " ").trim())`)
	if len(rows) != 2 || rows[0] != "base 12 3 2 1 0 0 0 0 66.67% 66.67%" || rows[1] != "rl 12 7 4 2 1 0 0 0 100.00% 100.00%" {
		t.Errorf("CoT counts %q", rows)
	}
	if s := eval[string](t, b, `document.getElementById("cot-status").innerText`); !strings.Contains(s, "3 problems") {
		t.Errorf("CoT status %q: want the 3 judged problems", s)
	}
	b.waitChart(t, "#perplexity-chart")
	ppl := eval[[]string](t, b, `[...document.querySelectorAll("#perplexity-table tbody tr")].map(r => r.dataset.model)`)
	if strings.Join(ppl, ",") != "base,rl" {
		t.Errorf("perplexity table models %v", ppl)
	}
	// Answer entropy comes with the statistics job, enqueued by opening the page.
	b.waitFor(t, "the answer-entropy chart", `(() => {
		if (document.querySelector("#entropy-chart")) return "yes";
		if (document.readyState === "complete" && !window.__reloading) { window.__reloading = true; setTimeout(() => location.reload(), 1000); }
		return "";
	})()`, time.Minute)
	b.waitLoaded(t, here)
	b.waitChart(t, "#entropy-chart")
	// Readable charts (issue 22.4): no text of the perplexity or entropy chart drawn over
	// another (model names and counts overlapped), the perplexity axis spans the boxes rather
	// than a fixed 1 to a round ceiling, and "equal entropy" is drawn whole inside the chart.
	for _, id := range []string{"#perplexity-chart", "#entropy-chart"} {
		for _, p := range eval[[]string](t, b, `(`+textOverlapsJS+`)(document.querySelector("`+id+` [_echarts_instance_]"))`) {
			t.Errorf("%s: %s", id, p)
		}
	}
	span := eval[[]float64](t, b, `(() => {
		const c = echarts.getInstanceByDom(document.querySelector("#perplexity-chart [_echarts_instance_]"));
		const ext = c.getModel().getComponent("yAxis", 0).axis.scale.getExtent();
		const vs = c.getOption().series.flatMap(s => s.data.flatMap(d => (d.value || d) || [])).filter(v => typeof v === "number");
		return [ext[0], ext[1], Math.min(...vs), Math.max(...vs)];
	})()`)
	if len(span) == 4 && span[3] > span[2] && (span[3]-span[2])/(span[1]-span[0]) < 0.3 {
		t.Errorf("perplexity axis %.3f–%.3f squeezes boxes spanning %.3f–%.3f", span[0], span[1], span[2], span[3])
	}
	inside := eval[string](t, b, `(() => {
		const div = document.querySelector("#entropy-chart [_echarts_instance_]");
		const c = echarts.getInstanceByDom(div);
		const el = c.getZr().storage.getDisplayList(true).find(e => e.style && e.style.text === "equal entropy");
		if (!el) return "no equal-entropy label";
		const r = el.getBoundingRect(), t = el.getComputedTransform ? el.getComputedTransform() : el.transform;
		const x = t ? t[0] * (r.x + r.width) + t[2] * r.y + t[4] : r.x + r.width;
		return x <= div.clientWidth ? "" : "equal-entropy label runs past the chart's edge (" + Math.round(x) + " > " + div.clientWidth + ")";
	})()`)
	if inside != "" {
		t.Error(inside)
	}

	// Support at ε = 0.5: base {p1}, RL {p1, p2}: 1 preserved, 1 expanded, p3 outside.
	b.do(t, "set ε", chromedp.SetValue(chromedp.CSS("#eps-form input[name=eps]"), "0.5"))
	b.clickAndWait(t, "#eps-form button", regexp.MustCompile(`[?&]eps=0.5`))
	b.waitChart(t, "#support-chart")
	if s := eval[string](t, b, `document.getElementById("support-pairs").innerText`); !strings.Contains(s, "1 preserved, 0 shrunk") || !strings.Contains(s, "1 expanded") {
		t.Errorf("support at ε = 0.5: %q", s)
	}
	if href := eval[string](t, b, `document.querySelector("#support .data-csv").getAttribute("href")`); !strings.Contains(href, "eps=0.5") {
		t.Errorf("support data link %q: want ε in it", href)
	}
	for _, name := range []string{"cot", "perplexity", "entropy"} {
		if n := eval[int](t, b, fmt.Sprintf(`document.querySelectorAll('a.data-csv[href*="/data/%s.csv"]').length`, name)); n != 1 {
			t.Errorf("%s: %d CSV links", name, n)
		}
	}

	// Problem p1: the judge's hostile reason is text; label the base model's flawed guess valid.
	b.open(t, fmt.Sprintf("%s/comparisons/%d/problems/%d", a.url, cid, pids["p1"]))
	reasons := eval[string](t, b, `[...document.querySelectorAll(".judge-reason")].map(e => e.innerText).join("|")`)
	if !strings.Contains(reasons, `a guess <img src=x onerror="window.__xss='judge'">`) {
		t.Errorf("judge reasons %q: want the hostile one as text", reasons)
	}
	if n := eval[int](t, b, `document.querySelectorAll(".reasoning img").length`); n != 0 {
		t.Errorf("%d img elements from judge output", n)
	}
	runID := eval[string](t, b, `document.querySelector(".model-samples").id.replace("run-", "")`)
	sample := "#sample-" + runID + "-1"
	b.do(t, "note", chromedp.SetValue(chromedp.CSS(sample+" .reasoning-form input[name=note]"), "the guess is checked after"))
	b.submitAndWait(t, sample+" .label-valid")
	if l := eval[string](t, b, fmt.Sprintf(`(document.querySelector(%q) || {dataset: {}}).dataset.label || ""`, sample+" .reasoning-label")); l != "valid" {
		t.Errorf("label after clicking: %q", l)
	}

	// p3 is RL-only: its review offers the Invisible Leash's labels.
	b.open(t, fmt.Sprintf("%s/comparisons/%d/problems/%d", a.url, cid, pids["p3"]))
	buttons := eval[[]string](t, b, `[...document.querySelectorAll("#review-form .verdict-button")].map(e => e.value)`)
	if strings.Join(buttons, ",") != "format-fix,composition,new-solution,verifier-fp,unsure" {
		t.Errorf("RL-only review buttons %v", buttons)
	}
	b.submitAndWait(t, `#review-form button[value="format-fix"]`)
	b.open(t, page)
	b.waitReport(t)
	if s := eval[string](t, b, `document.getElementById("rl-review-summary").innerText`); s != "1 RL-only: 1 format fix" {
		t.Errorf("RL-only review summary %q", s)
	}
	// The label moved base p1 #1 to valid: base CoT-pass@4 is still 2/3 (p3 has none), its valid count 3.
	rows = eval[[]string](t, b, `[...document.querySelectorAll("#cot-counts tbody tr")].map(r => r.innerText.replace(/\s+/g, " ").trim())`)
	if len(rows) != 2 || rows[0] != "base 12 3 3 0 0 1 0 0 66.67% 66.67%" {
		t.Errorf("CoT counts after the label %q", rows)
	}
	b.noScriptRan(t)
	b.checkConsole(t)
}

// submitAndWait clicks a form's button and waits for the page the form
// leads to, also when it has the same address as this one.
func (b *browser) submitAndWait(t *testing.T, sel string) {
	t.Helper()
	eval[bool](t, b, `window.__before = true`)
	b.do(t, "click "+sel, chromedp.Click(chromedp.CSS(sel)))
	b.waitFor(t, "the page after "+sel, `!window.__before && document.readyState === "complete" ? "yes" : ""`, 15*time.Second)
}

// The shipped examples show the debate figures their data allow: the
// HumanEval pair (completion texts) answer diversity and support, the
// counts-only MATH500 pair support only (diversity says why not); neither
// has a judge or a scoring endpoint, and both say so.
func TestBrowserExampleDebateFigures(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 2*time.Minute)
	b.signIn(t, a)
	ctx := context.Background()
	ids, err := examples.SeedIfEmpty(ctx, a.st, a.client)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]int64{}
	for _, id := range ids {
		a.waitReady(t, id, 90*time.Second)
		c, err := a.st.GetComparison(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		byName[strings.SplitN(c.Name, ":", 2)[0]] = id
	}
	if byName["HumanEval"] == 0 || byName["MATH500"] == 0 {
		t.Fatalf("shipped examples %v", byName)
	}

	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, byName["HumanEval"]))
	b.waitReport(t)
	// Diversity comes with the statistics job, enqueued by opening the page.
	b.waitFor(t, "HumanEval's answer-entropy chart", `(() => {
		if (document.querySelector("#entropy-chart")) return "yes";
		if (document.readyState === "complete" && !window.__reloading) { window.__reloading = true; setTimeout(() => location.reload(), 1000); }
		return "";
	})()`, 90*time.Second)
	b.waitLoaded(t, regexp.MustCompile(`^/comparisons/\d+$`))
	b.waitChart(t, "#entropy-chart")
	b.waitChart(t, "#support-chart")
	if s := eval[string](t, b, `document.getElementById("diversity-pairs").innerText`); !strings.Contains(s, "zephyr-7b-alpha vs Mistral-7B-Instruct-v0.1") {
		t.Errorf("HumanEval diversity summary %q", s)
	}
	for id, want := range map[string]string{"cot-status": "No judge is set up", "perplexity-status": "No scoring endpoint is set up"} {
		if s := eval[string](t, b, fmt.Sprintf(`document.getElementById(%q).innerText`, id)); !strings.HasPrefix(s, want) {
			t.Errorf("HumanEval #%s %q, want %q…", id, s, want)
		}
	}

	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, byName["MATH500"]))
	b.waitReport(t)
	b.waitChart(t, "#support-chart")
	if n := eval[int](t, b, `document.querySelectorAll("#entropy-chart").length`); n != 0 {
		t.Error("MATH500 (counts only) shows an answer-entropy chart")
	}
	if s := eval[string](t, b, `document.getElementById("diversity-status").innerText`); !strings.Contains(s, "only counts were imported") {
		t.Errorf("MATH500 diversity status %q", s)
	}
	b.checkConsole(t)
}

package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/examples"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/testfiles"
)

// rollout is one sampled text of the GSM8K SFT/PPO files.
type rollout struct {
	Rollout int    `json:"rollout"`
	Correct bool   `json:"correct"`
	Text    string `json:"text"`
}

// readRollouts returns the rollouts of one problem (by qid) of a GSM8K
// results file.
func readRollouts(t *testing.T, path string, qid int) []rollout {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var row struct {
			QID      int       `json:"qid"`
			Rollouts []rollout `json:"rollouts"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if row.QID == qid {
			return row.Rollouts
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("%s has no qid %d", path, qid)
	return nil
}

var (
	mappingPath = regexp.MustCompile(`^/comparisons/(\d+)/mapping$`)
	problemPath = regexp.MustCompile(`^/comparisons/\d+/problems/\d+(\?list=[^#]*)?$`) // from the table: with its list
)

// waitReport waits until the tab shows a comparison's report (#headline),
// failing early with the import error if the comparison failed.
func (b *browser) waitReport(t *testing.T) {
	t.Helper()
	got := b.waitFor(t, "the report", `(() => {
		if (document.querySelector("#headline")) return "ready";
		const e = document.querySelector("#import-error");
		return e ? "failed: " + e.textContent : "";
	})()`, 60*time.Second)
	if got != "ready" {
		t.Fatalf("import %s", got)
	}
}

// chartState reads the ECharts instance drawn into the first element under
// container that has one.
type chartState struct {
	Canvas  bool      `json:"canvas"`
	Painted int       `json:"painted"` // canvas pixels that are not blank
	Series  []string  `json:"series"`
	Points  []int     `json:"points"`
	Last    []float64 `json:"last"` // each curve's pass@k at its largest k
}

// chartJS gives chartStateJS for the chart under container.
func chartJS(container string) string {
	return strings.Replace(chartStateJS, "CONTAINER", strconv.Quote(container), 1)
}

// chartStateJS reads a chartState; CONTAINER is replaced by a selector.
const chartStateJS = `(() => {
	const div = document.querySelector(CONTAINER + " [_echarts_instance_]");
	const inst = div && echarts.getInstanceByDom(div);
	if (!inst) return null;
	const canvas = div.querySelector("canvas");
	let painted = 0;
	if (canvas) {
		const d = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
		for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) painted++;
	}
	// The curves (ids curve0, curve1, …), not their bands.
	const series = (inst.getOption().series || []).filter(s => /^curve/.test(String(s.id)));
	// A point is [k, pass@k in percent] or [k, pass@k, lower, upper].
	const y = (p) => Array.isArray(p) ? p[1] : NaN;
	return {
		canvas: !!canvas, painted,
		series: series.map(s => String(s.name)),
		points: series.map(s => (s.data || []).length),
		last: series.map(s => { const d = s.data || []; return d.length ? Number(y(d[d.length - 1])) : -1; }),
	};
})()`

// The browser test: upload the real GSM8K SFT-vs-PPO pair through
// the form, confirm the guessed field mapping, watch the progress page turn
// into the report, and read the crossover chart, the Venn counts, the
// base-only problems and problem 22's correct rollouts.
func TestBrowserUploadGSM8K(t *testing.T) { testBrowserUploadGSM8K(t) }

// TestBrowserUploadGSM8KUnlicensed is TestBrowserUploadGSM8K on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestBrowserUploadGSM8K runs on the stand-in.
func TestBrowserUploadGSM8KUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testBrowserUploadGSM8K(t)
}

func testBrowserUploadGSM8K(t *testing.T) {
	dir := testfiles.GSM8KProbe(t)
	dataset := filepath.Join(dir, "data/gsm8k_subset.jsonl")
	sft := filepath.Join(dir, "results_1024_cuda/sft_raw.jsonl")
	ppo := filepath.Join(dir, "results_1024_cuda/rl_raw.jsonl")
	a := startApp(t)
	b := newBrowser(t, 80*time.Second)
	b.signIn(t, a)

	b.open(t, a.url+"/comparisons/new")
	row := func(i int, field string) string {
		return fmt.Sprintf("#models .model-row:nth-child(%d) [name=%s]", i, field)
	}
	b.do(t, "fill the new comparison form",
		chromedp.SendKeys(chromedp.CSS("#new-comparison input[name=name]"), "GSM8K SFT vs PPO"),
		chromedp.SetUploadFiles(chromedp.CSS("input[name=dataset_file]"), []string{dataset}),
		chromedp.SendKeys(chromedp.CSS(row(1, "model_name")), "SFT"),
		chromedp.SetUploadFiles(chromedp.CSS(row(1, "model_file")), []string{sft}),
		chromedp.SetValue(chromedp.CSS(row(2, "model_role")), "rl"),
		chromedp.SendKeys(chromedp.CSS(row(2, "model_name")), "PPO"),
		chromedp.SetUploadFiles(chromedp.CSS(row(2, "model_file")), []string{ppo}),
	)
	// The form uploads with XMLHttpRequest and then follows the redirect.
	b.do(t, "submit", chromedp.Click(chromedp.CSS(`#new-comparison button[type=submit]`)))
	at := b.waitLoaded(t, mappingPath)
	id, _ := strconv.ParseInt(mappingPath.FindStringSubmatch(at)[1], 10, 64)

	// The rollouts layout is not a known format: Reach guessed a mapping.
	guesses := eval[[]map[string]string](t, b, `Array.from(document.querySelectorAll("#mapping-form fieldset")).map(fs => {
		const o = {legend: fs.querySelector("legend").textContent};
		fs.querySelectorAll("select, input").forEach(s => { o[s.name.replace(/^run\d+_/, "")] = s.value; });
		return o;
	})`)
	if len(guesses) != 2 {
		t.Fatalf("mapping page asks about %d files, want 2 (SFT, PPO): %v", len(guesses), guesses)
	}
	for _, g := range guesses {
		want := map[string]string{"problem_id": "qid", "list": "rollouts", "completion": "text", "correct": "correct"}
		for k, v := range want {
			if g[k] != v {
				t.Errorf("%s: field %q preselected as %q, want %q", g["legend"], k, g[k], v)
			}
		}
	}
	b.do(t, "confirm the mapping", chromedp.Click(chromedp.CSS(`#mapping-form button[type=submit]`)))

	// The progress page lists both models' jobs, polls with htmx and is
	// redirected to the report (unless the jobs finished before it loaded).
	first := b.waitFor(t, "the progress page or the report", `(() => {
		if (document.querySelector("#headline")) return "report";
		const rows = document.querySelectorAll("#progress table.progress tbody tr");
		return rows.length ? Array.from(rows).map(r => r.cells[0].textContent.trim()).join(" | ") : "";
	})()`, 30*time.Second)
	if first == "report" {
		t.Log("the jobs finished before the progress page loaded")
	} else if first != "SFT (base) read as custom field mapping | PPO (rl) read as custom field mapping" {
		t.Errorf("progress page rows %q, want SFT (base) read as custom field mapping | PPO (rl) read as custom field mapping", first)
	}
	b.waitReport(t)
	if here := eval[string](t, b, `location.pathname`); here != fmt.Sprintf("/comparisons/%d", id) {
		t.Errorf("report at %s, want /comparisons/%d", here, id)
	}

	// Crossover: a canvas with something drawn on it and one curve per model,
	// k = 1…8.
	cs := b.waitChart(t, "#crossover-chart")
	if !slices.Equal(cs.Series[:min(2, len(cs.Series))], []string{"SFT", "PPO"}) || len(cs.Series) < 2 {
		t.Errorf("crossover series %v, want SFT and PPO first", cs.Series)
	}
	for i := range min(2, len(cs.Points)) {
		if cs.Points[i] != 8 {
			t.Errorf("crossover series %s has %d points, want 8 (k = 1…8)", cs.Series[i], cs.Points[i])
		}
	}
	// The curves end at pass@8 = solved/30 in percent (real pair: SFT 28/30, PPO 27/30).
	facts := testfiles.Facts(t)
	sftSolved, rlSolved := facts.Solved()
	wantSFT, wantRL := 100*float64(sftSolved)/30, 100*float64(rlSolved)/30
	if len(cs.Last) >= 2 && (math.Abs(cs.Last[0]-wantSFT) > 0.01 || math.Abs(cs.Last[1]-wantRL) > 0.01) {
		t.Errorf("pass@8 on the chart %.3f / %.3f, want %.3f / %.3f", cs.Last[0], cs.Last[1], wantSFT, wantRL)
	}

	// The page may still be parsing below the charts already drawn.
	b.waitFor(t, "the whole page", `document.readyState === "complete" && document.querySelector(".venn-counts[data-pair='1'] .n-neither") ? "y" : ""`, 30*time.Second)
	venn := eval[map[string]string](t, b, `(() => {
		const v = document.querySelector(".venn-counts[data-pair='1']");
		const o = {};
		for (const k of ["both", "base-only", "other-only", "neither"]) {
			const el = v && v.querySelector(".n-" + k);
			o[k] = el ? el.textContent.trim() : "missing";
		}
		return o;
	})()`)
	want := map[string]string{"both": strconv.Itoa(facts.Both), "base-only": strconv.Itoa(len(facts.BaseOnly)),
		"other-only": strconv.Itoa(facts.RLOnly), "neither": strconv.Itoa(facts.Neither)}
	for k, v := range want {
		if venn[k] != v {
			t.Errorf("Venn %s = %q, want %s", k, venn[k], v)
		}
	}
	b.waitChart(t, "#venn-1")

	// Filter the problem table to the base-only set with its form.
	b.do(t, "filter base-only",
		chromedp.SetValue(chromedp.CSS(`#problems select[name=region]`), "base-only"),
		chromedp.Click(chromedp.CSS(`#problems form.filters button[type=submit]`)),
	)
	b.waitLoaded(t, regexp.MustCompile(`region=base-only`))
	keys := eval[[]string](t, b, `Array.from(document.querySelectorAll("#problem-table tbody tr")).map(r => r.dataset.key)`)
	if sorted := slices.Sorted(slices.Values(keys)); !slices.Equal(sorted, facts.BaseOnly) {
		t.Fatalf("base-only problems %v, want %v", keys, facts.BaseOnly)
	}

	// Problem 22 of the real pair (6 of the stand-in): SFT solved it in 3 of 8 rollouts, PPO in none.
	b.clickAndWait(t, fmt.Sprintf(`#problem-table tr[data-key="%d"] a`, facts.BaseOnly3), problemPath)
	b.checkProblem22(t, readRollouts(t, sft, facts.BaseOnly3))
	b.checkConsole(t)
}

// waitChart waits until the chart under container is drawn and returns it.
func (b *browser) waitChart(t *testing.T, container string) chartState {
	t.Helper()
	b.waitFor(t, "the chart in "+container, fmt.Sprintf(`(() => {
		const s = %s;
		return s && s.canvas && s.painted > 500 ? "drawn" : "";
	})()`, chartJS(container)), 10*time.Second)
	return eval[chartState](t, b, chartJS(container))
}

// checkProblem22 checks the problem page of GSM8K qid 22 (the stand-in's 6): the SFT model's
// correct rollouts come first, open, and show the file's own text (the
// parts KaTeX left as text are slices of it, in order), the PPO model shows
// 0/8 correct.
func (b *browser) checkProblem22(t *testing.T, rollouts []rollout) {
	t.Helper()
	type shown struct {
		Heading string     `json:"heading"`
		Classes []string   `json:"classes"`
		Open    []bool     `json:"open"`
		Index   []int      `json:"index"`
		Texts   [][]string `json:"texts"` // per correct sample: the completion's own text nodes
	}
	models := eval[[]shown](t, b, `Array.from(document.querySelectorAll(".model-samples")).map(m => {
		const ds = Array.from(m.querySelectorAll("details.sample"));
		return {
			heading: m.querySelector("h2").textContent.replace(/\s+/g, " ").trim(),
			classes: ds.map(d => d.classList.contains("sample-correct") ? "correct" : "other"),
			open: ds.map(d => d.open),
			index: ds.map(d => { const m = /sample #(\d+)/.exec(d.querySelector("summary").textContent); return m ? +m[1] : -1; }),
			texts: Array.from(m.querySelectorAll("details.sample-correct pre.completion")).map(pre =>
				Array.from(pre.childNodes).filter(n => n.nodeType === 3).map(n => n.data)),
		};
	})`)
	if len(models) != 2 {
		t.Fatalf("problem 22 shows %d models, want 2", len(models))
	}
	if !strings.Contains(models[0].Heading, "SFT") || !strings.Contains(models[0].Heading, "3/8 correct") {
		t.Errorf("first model heading %q, want SFT with 3/8 correct", models[0].Heading)
	}
	if !strings.Contains(models[1].Heading, "PPO") || !strings.Contains(models[1].Heading, "0/8 correct") {
		t.Errorf("second model heading %q, want PPO with 0/8 correct", models[1].Heading)
	}
	sftShown := models[0]
	if want := []string{"correct", "correct", "correct", "other", "other", "other", "other", "other"}; !slices.Equal(sftShown.Classes, want) {
		t.Errorf("SFT samples %v, want the 3 correct ones first of 8", sftShown.Classes)
	}
	if len(sftShown.Texts) != 3 {
		t.Fatalf("SFT shows %d correct completions, want 3", len(sftShown.Texts))
	}
	for i, nodes := range sftShown.Texts {
		if !sftShown.Open[i] {
			t.Errorf("correct sample %d is collapsed, want it open", sftShown.Index[i])
		}
		idx := sftShown.Index[i]
		if idx < 0 || idx >= len(rollouts) || !rollouts[idx].Correct {
			t.Errorf("correct sample #%d is not a correct rollout of qid 22 in the file", idx)
			continue
		}
		text, at, total := rollouts[idx].Text, 0, 0
		for _, n := range nodes {
			j := strings.Index(text[at:], n)
			if j < 0 {
				t.Errorf("sample #%d shows %q, which is not in rollout %d's text after offset %d", idx, brief(n), idx, at)
				break
			}
			at += j + len(n)
			total += len(strings.TrimSpace(n))
		}
		// The text shows from its first character, markup-like text such as
		// the real rollouts' leading <think> included, as text.
		if len(nodes) == 0 || !strings.HasPrefix(strings.TrimSpace(text), firstChars(nodes[0], 7)) {
			t.Errorf("sample #%d does not start with the rollout's literal %q: %q", idx, firstChars(text, 7), brief(strings.Join(nodes, "")))
		}
		if total < len(text)/3 {
			t.Errorf("sample #%d shows %d characters of plain text of the rollout's %d", idx, total, len(text))
		}
	}
}

// firstChars is s without leading space, cut to at most n bytes.
func firstChars(s string, n int) string {
	s = strings.TrimSpace(s)
	return s[:min(n, len(s))]
}

// Hostile strings in model output, model names and problem statements.
const (
	xssScript = `<script>window.__xss=1</script>`
	xssImg    = `<img src=x onerror="window.__xss=2">`
	xssLink   = `<a href="javascript:window.__xss=3">click</a>`
	xssKaTeX  = `$\href{javascript:alert(1)}{x}$`
	xssModel  = `base </script><script>window.__xss=4</script>`
	xssOther  = `RL <img src=x onerror="window.__xss=5">`
	xssName   = `hostile </title><script>window.__xss=6</script>`
)

// Model text is untrusted: the report and problem pages show hostile
// completions, model names and statements as text and never run them.
func TestBrowserHostileModelOutput(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 60*time.Second)
	b.signIn(t, a)
	ctx := context.Background()

	line := func(v any) string {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(j) + "\n"
	}
	dataset := line(map[string]string{"id": "h1", "problem": "<b>bold</b> What is $1+1$?", "answer": "2"}) +
		line(map[string]string{"id": "h2", "problem": "What is $1+2$?", "answer": "3"})
	hostile := []string{xssScript, xssImg, xssLink, xssKaTeX}
	samples := func(solves string) string {
		var s string
		for _, pid := range []string{"h1", "h2"} {
			for i, c := range hostile {
				s += line(map[string]any{"problem_id": pid, "sample_index": i, "completion": c, "correct": pid == solves && i == 0})
			}
		}
		return s
	}
	file := func(name, body string) intake.File {
		return intake.File{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }}
	}
	id, _, err := intake.Create(ctx, a.st, a.client, intake.Spec{
		Name:    xssName,
		Dataset: file("hostile.jsonl", dataset),
		Models: []intake.Model{
			{Name: xssModel, File: file("base.jsonl", samples("h1"))},
			{Name: xssOther, File: file("rl.jsonl", samples("h2"))},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t, id, 30*time.Second)

	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
	b.waitReport(t)
	b.noScriptRan(t)
	// Names show as text, and reach the chart intact (escaped once, not twice).
	text := eval[string](t, b, `document.body.innerText`)
	for _, s := range []string{xssName, xssModel, xssOther} {
		if !strings.Contains(text, s) {
			t.Errorf("report page does not show %q as text", s)
		}
	}
	if title := eval[string](t, b, `document.title`); !strings.Contains(title, xssName) {
		t.Errorf("page title %q does not hold the comparison name as text", title)
	}
	cs := b.waitChart(t, "#crossover-chart")
	if !slices.Equal(cs.Series, []string{xssModel, xssOther}) {
		t.Errorf("crossover series names %q, want %q", cs.Series, []string{xssModel, xssOther})
	}
	if n := eval[int](t, b, `document.querySelectorAll("main img").length`); n != 0 {
		t.Errorf("report page has %d <img> elements, want none", n)
	}

	// Problem h1: the statement and all eight completions.
	b.clickAndWait(t, `#problem-table tr[data-key="h1"] a`, problemPath)
	b.noScriptRan(t)
	stmt := eval[map[string]any](t, b, `(() => {
		const s = document.querySelector("#statement");
		return {text: s.innerText, bold: s.querySelectorAll("b").length, katex: s.querySelectorAll(".katex").length};
	})()`)
	if !strings.Contains(stmt["text"].(string), "<b>bold</b>") || stmt["bold"].(float64) != 0 {
		t.Errorf("statement %q with %v <b> elements, want <b>bold</b> as text", stmt["text"], stmt["bold"])
	}
	if stmt["katex"].(float64) < 1 {
		t.Errorf("statement math $1+1$ not rendered by KaTeX")
	}
	// Expand the collapsed (incorrect) samples, as a reader would, so that
	// innerText is what shows.
	pres := eval[[]string](t, b, `(() => {
		document.querySelectorAll("details.sample").forEach(d => { d.open = true; });
		return Array.from(document.querySelectorAll("pre.completion")).map(p => p.innerText);
	})()`)
	if len(pres) != 8 {
		t.Fatalf("problem page shows %d completions, want 8", len(pres))
	}
	all := strings.Join(pres, "\n")
	for _, s := range []string{xssScript, xssImg, xssLink} {
		if strings.Count(all, s) != 2 {
			t.Errorf("completion %q shown %d times as text, want 2 (once per model)", s, strings.Count(all, s))
		}
	}
	if n := eval[int](t, b, `document.querySelectorAll("pre.completion *:is(img, a, script, iframe, object, embed), [onerror], [onclick]").length`); n != 0 {
		t.Errorf("%d live elements (img, a, script, handlers) inside completions, want none", n)
	}
	if n := eval[int](t, b, `document.querySelectorAll("pre.completion .katex").length`); n != 2 {
		t.Errorf("KaTeX rendered %d completions, want 2 (the \\href one, once per model)", n)
	}
	if n := eval[int](t, b, `Array.from(document.querySelectorAll("a[href], [href]")).filter(a => /^\s*javascript:/i.test(a.getAttribute("href"))).length`); n != 0 {
		t.Errorf("%d javascript: links on the problem page, want none", n)
	}
	heads := eval[string](t, b, `Array.from(document.querySelectorAll(".model-samples h2")).map(h => h.textContent).join("\n")`)
	if !strings.Contains(heads, xssModel) || !strings.Contains(heads, xssOther) {
		t.Errorf("model headings %q do not show the names as text", heads)
	}

	// The rendered markdown (the default view) shows the same hostile
	// completions as text too, with nothing live in it.
	md := eval[[]string](t, b, `Array.from(document.querySelectorAll(".completion-md")).map(p => p.innerText)`)
	if len(md) != 8 {
		t.Fatalf("%d rendered completions, want 8", len(md))
	}
	mdAll := strings.Join(md, "\n")
	for _, s := range []string{xssScript, xssImg, xssLink} {
		if strings.Count(mdAll, s) != 2 {
			t.Errorf("rendered completion %q shown %d times as text, want 2 (once per model)", s, strings.Count(mdAll, s))
		}
	}
	if n := eval[int](t, b, `document.querySelectorAll(".completion-md *:is(img, a, script, iframe, object, embed), .completion-md [onerror], .completion-md [onclick]").length`); n != 0 {
		t.Errorf("%d live elements inside the rendered completions, want none", n)
	}

	// Click the word that looks like a link in the raw text: nothing happens.
	b.do(t, "show the raw text", chromedp.Click(chromedp.CSS("#completion-view")))
	before := eval[string](t, b, `location.href`)
	pt := eval[[]float64](t, b, `(() => {
		const pre = Array.from(document.querySelectorAll("pre.completion")).find(p => p.textContent.includes("javascript:window.__xss=3"));
		pre.scrollIntoView({block: "center"});
		const node = Array.from(pre.childNodes).find(n => n.nodeType === 3 && n.data.includes(">click<"));
		const at = node.data.indexOf(">click<") + 1;
		const r = document.createRange();
		r.setStart(node, at); r.setEnd(node, at + 5);
		const box = r.getBoundingClientRect();
		const x = box.left + box.width / 2, y = box.top + box.height / 2;
		return [x, y, document.elementFromPoint(x, y) === pre ? 1 : 0];
	})()`)
	if pt[2] != 1 {
		t.Fatalf("the word \"click\" at (%.0f, %.0f) is not the completion's own text", pt[0], pt[1])
	}
	b.do(t, "click the fake link", chromedp.MouseClickXY(pt[0], pt[1]))
	// A javascript: navigation would run synchronously with the click; a
	// round trip to the page after it sees its effect.
	if after := eval[string](t, b, `location.href`); after != before {
		t.Errorf("clicking the completion's link text navigated from %s to %s", before, after)
	}
	b.noScriptRan(t)
	b.checkConsole(t)
}

// noScriptRan fails the test if any hostile snippet set window.__xss.
func (b *browser) noScriptRan(t *testing.T) {
	t.Helper()
	if v := eval[string](t, b, `typeof window.__xss === "undefined" ? "" : String(window.__xss)`); v != "" {
		t.Errorf("hostile snippet %s ran on %s", v, eval[string](t, b, `location.pathname`))
	}
}

// The shipped example: the MATH500 counts pair's headline figures, a click
// on the Venn's base-only region listing its 19 problems, and a base-only
// problem's statement typeset by KaTeX.
func TestBrowserExampleReport(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 80*time.Second)
	b.signIn(t, a)
	ctx := context.Background()
	ids, err := examples.SeedIfEmpty(ctx, a.st, a.client)
	if err != nil {
		t.Fatal(err)
	}
	var math500 int64
	for _, id := range ids {
		// Wait for every example, so that no import is still running when
		// the test's database is dropped.
		a.waitReady(t, id, 60*time.Second)
		c, err := a.st.GetComparison(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(c.Name, "MATH500") {
			math500 = id
		}
	}
	if math500 == 0 {
		t.Fatalf("the shipped examples %v hold no MATH500 comparison", ids)
	}

	// The home page lists the example; its link opens the report.
	b.open(t, a.url+"/")
	b.clickAndWait(t, fmt.Sprintf(`a[href="/comparisons/%d"]`, math500), regexp.MustCompile(fmt.Sprintf(`^/comparisons/%d$`, math500)))
	b.waitReport(t)
	b.screenshot(t, "comparison-page")
	// Each figure without its bootstrap interval (span.ci).
	figures := eval[[][]string](t, b, `Array.from(document.querySelectorAll("#headline tbody tr")).map(r =>
		Array.from(r.cells).map(c => {
			const x = c.cloneNode(true);
			x.querySelectorAll(".ci").forEach(e => e.remove());
			return x.textContent.replace(/\s+/g, " ").trim();
		}))`)
	if len(figures) != 2 {
		t.Fatalf("headline has %d rows, want 2: %q", len(figures), figures)
	}
	// Columns: model, pass@1, pass@128, solved, k*, ΔSE, verdicts.
	for i, want := range [][2]string{{"61.39%", "96.20%"}, {"77.93%", "93.00%"}} {
		if len(figures[i]) < 3 || figures[i][1] != want[0] || figures[i][2] != want[1] {
			t.Errorf("headline row %d %q, want pass@1 %s and pass@128 %s", i, figures[i], want[0], want[1])
		}
	}
	if th := eval[string](t, b, `document.querySelector("#headline thead").textContent`); !strings.Contains(th, "pass@128") {
		t.Errorf("headline columns %q, want pass@128", th)
	}
	if src := eval[string](t, b, `(document.querySelector("#source-note") || {}).textContent || ""`); !strings.Contains(src, "Yue et al.") || !strings.Contains(src, "cc1107yss/limit-of-rlvr-qwen7b-math500-reproduction") {
		t.Errorf("source note %q does not name the source", src)
	}
	b.waitChart(t, "#crossover-chart")
	b.waitChart(t, "#venn-1")

	// Click the base-only count (19) drawn on the Venn's canvas: find where
	// ECharts drew it, and click there with the mouse.
	pt := eval[[]float64](t, b, `(() => {
		const div = document.querySelector("#venn-1 [_echarts_instance_]");
		div.scrollIntoView({block: "center"});
		const zr = echarts.getInstanceByDom(div).getZr();
		const el = zr.storage.getDisplayList(true).find(e => e.style && e.style.text === "19");
		if (!el) return [];
		const r = el.getBoundingRect().clone();
		r.applyTransform(el.getComputedTransform());
		const box = div.getBoundingClientRect();
		return [box.left + r.x + r.width / 2, box.top + r.y + r.height / 2];
	})()`)
	if len(pt) != 2 {
		t.Fatal("the Venn diagram shows no base-only count 19")
	}
	b.do(t, "click the Venn's base-only region", chromedp.MouseClickXY(pt[0], pt[1]))
	b.waitLoaded(t, regexp.MustCompile(`[?&]region=`))
	rows := eval[[]string](t, b, `Array.from(document.querySelectorAll("#problem-table tbody tr")).map(r => r.className)`)
	if len(rows) != 19 {
		t.Fatalf("the Venn's base-only region lists %d problems, want 19 (at %s)", len(rows), eval[string](t, b, `location.search`))
	}
	for i, c := range rows {
		if c != "region-base-only" {
			t.Errorf("row %d has class %q, want region-base-only", i, c)
		}
	}
	if sel := eval[string](t, b, `document.querySelector("#problems select[name=region]").value`); sel != "base-only" {
		t.Errorf("the region filter shows %q, want base-only", sel)
	}

	// A base-only problem: its LaTeX statement is typeset by KaTeX, and the
	// page says that only counts exist for it.
	b.clickAndWait(t, `#problem-table tbody tr:first-child a`, problemPath)
	got := b.waitFor(t, "KaTeX in the statement", `document.querySelector("#statement .katex") ? "yes" : ""`, 10*time.Second)
	if got != "yes" {
		t.Fatal("statement not typeset")
	}
	if tag := eval[string](t, b, `document.querySelector(".region").textContent.trim()`); tag != "base only" {
		t.Errorf("problem page region tag %q, want base only", tag)
	}
	if n := eval[int](t, b, `document.querySelectorAll(".katex-error").length`); n != 0 {
		t.Errorf("%d KaTeX errors on the problem page", n)
	}

	// Every example's page fits the 1,280 px window: long problem ids and
	// verdict notes wrap instead of widening the page (HumanEval's headline
	// table was 1,965 px wide).
	for _, id := range ids {
		b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
		b.waitReport(t)
		if w := eval[[]int](t, b, `[document.documentElement.scrollWidth, document.documentElement.clientWidth]`); w[0] > w[1] {
			t.Errorf("comparison %d is %d px wide in a %d px window", id, w[0], w[1])
		}
	}
	b.checkConsole(t)
}

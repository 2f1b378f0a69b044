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
)

// jsonl is one JSON line per value.
func jsonl(t *testing.T, vs ...any) string {
	t.Helper()
	var s strings.Builder
	for _, v := range vs {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		s.Write(j)
		s.WriteByte('\n')
	}
	return s.String()
}

func memFile(name, body string) intake.File {
	return intake.File{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }}
}

// onePairOnOneProblem imports a base and an RL model's completions on one
// problem (id q1, reference answer ref) and returns the problem page's URL.
func onePairOnOneProblem(t *testing.T, a *app, b *browser, ref string, base, rl []string) string {
	t.Helper()
	samples := func(texts []string) string {
		var vs []any
		for j, text := range texts {
			vs = append(vs, map[string]any{"problem_id": "q1", "sample_index": j, "completion": text})
		}
		return jsonl(t, vs...)
	}
	id, _, err := intake.Create(context.Background(), a.st, a.client, intake.Spec{Name: "one problem",
		Dataset: memFile("d.jsonl", jsonl(t, map[string]string{"id": "q1", "problem": "What is $1/2$ as a number?", "answer": ref})),
		Models: []intake.Model{{Name: "base", File: memFile("base.jsonl", samples(base))},
			{Name: "rl", File: memFile("rl.jsonl", samples(rl))}}})
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t, id, 60*time.Second)
	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
	b.waitReport(t)
	return b.clickAndWait(t, `#problem-table tr[data-key="q1"] a`, problemPath)
}

// The answer distribution puts the spellings of one answer ("1/2", "0.5",
// "\frac{1}{2}") in one row, lists each spelling below it with its count
// per model, marks the correct class, and a spelling's link shows only its
// samples.
func TestBrowserAnswerClasses(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 90*time.Second)
	b.signIn(t, a)
	onePairOnOneProblem(t, a, b, `\frac{1}{2}`,
		[]string{`So $\boxed{1/2}$.`, `So $\boxed{0.5}$.`, `So $\boxed{\frac{1}{2}}$.`, `So $\boxed{3}$.`},
		[]string{`So $\boxed{0.5}$.`, `So $\boxed{0.5}$.`, `So $\boxed{3.0}$.`, `So $\boxed{7}$.`})
	type row struct {
		Answer    string `json:"answer"`
		Spellings string `json:"spellings"`
		N         []int  `json:"n"`
		Correct   bool   `json:"correct"`
	}
	rows := eval[[]row](t, b, `Array.from(document.querySelectorAll("#answers tbody tr[data-answer]")).map(r => ({
		answer: r.dataset.answer, spellings: r.dataset.spellings,
		n: Array.from(r.querySelectorAll("td[data-model]")).map(c => +c.textContent),
		correct: r.classList.contains("answer-correct") && !!r.querySelector(".tag-correct")}))`)
	want := []row{{Answer: "0.5", Spellings: "3", N: []int{3, 2}, Correct: true}, {Answer: "3", Spellings: "2", N: []int{1, 1}},
		{Answer: "7", Spellings: "1", N: []int{0, 1}}}
	if len(rows) != len(want) {
		t.Fatalf("answer rows %+v; want %+v", rows, want)
	}
	for i := range want {
		if rows[i].Answer != want[i].Answer || rows[i].Spellings != want[i].Spellings || !slices.Equal(rows[i].N, want[i].N) || rows[i].Correct != want[i].Correct {
			t.Errorf("answer row %d %+v; want %+v", i, rows[i], want[i])
		}
	}
	type spelling struct {
		Text string `json:"text"`
		N    []int  `json:"n"`
	}
	members := eval[[]spelling](t, b, `Array.from(document.querySelectorAll("#answers tbody tr.answer-member")).map(r => ({
		text: r.dataset.spelling, n: Array.from(r.querySelectorAll("td[data-spelling-model]")).map(c => +c.textContent)}))`)
	wantM := []spelling{{"0.5", []int{1, 2}}, {"1/2", []int{1, 0}}, {`\frac{1}{2}`, []int{1, 0}}, {"3", []int{1, 0}}, {"3.0", []int{0, 1}}}
	if fmt.Sprint(members) != fmt.Sprint(wantM) {
		t.Errorf("spellings %v; want %v", members, wantM)
	}
	eval[bool](t, b, `(document.querySelector("#answers").scrollIntoView(), true)`)
	b.screenshot(t, "problem-answer-classes")
	b.clickAndWait(t, `#answers tr.answer-member[data-spelling="3.0"] a`, regexp.MustCompile(`[?&]answer=3\.0`))
	shown := eval[[]int](t, b, `Array.from(document.querySelectorAll(".model-samples")).map(m => m.querySelectorAll("details.sample").length)`)
	if !slices.Equal(shown, []int{0, 1}) {
		t.Errorf("samples with answer 3.0 per model %v; want [0 1]", shown)
	}
	b.checkConsole(t)
}

// Completions show as markdown with their math typeset (math delimiters
// survive markdown) and the answer line marked; hostile markdown (raw
// HTML, javascript: links, images with onerror) stays inert text; the raw
// toggle shows the plain text and is remembered across page loads.
func TestBrowserCompletionMarkdown(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 90*time.Second)
	b.signIn(t, a)
	good := "## Plan\n\nWe add **one** and *one*: $1_{a} + 1_{b}$ and \\(x_1 * y_1\\).\n\n- first\n- second\n\nSo the answer is $\\boxed{2}$."
	hostile := []string{
		"[click](javascript:window.__xss=4)",
		"![pic](x\" onerror=\"window.__xss=5)",
		"<details open ontoggle=\"window.__xss=6\">x</details>\n\nSo $\\boxed{3}$",
		"![p](https://127.0.0.1:1/track.png) and <img src=x onerror=\"window.__xss=7\">",
		"<a href=\"javascript:window.__xss=8\">**bold link**</a>",
	}
	page := onePairOnOneProblem(t, a, b, "2", append([]string{good}, hostile...), append([]string{good}, hostile...))
	b.noScriptRan(t)
	type view struct {
		Headings, Strong, Items, Katex int
		Mark                           string
	}
	first := eval[view](t, b, `(() => {
		const md = document.querySelector(".model-samples details.sample-correct .completion-md");
		const m = md.querySelector("mark.answer-line");
		return {Headings: md.querySelectorAll("h2").length, Strong: md.querySelectorAll("strong").length, Items: md.querySelectorAll("li").length,
			Katex: md.querySelectorAll(".katex").length, Mark: m ? m.textContent + (m.querySelector(".katex") ? "|katex" : "") : ""};
	})()`)
	if first.Headings != 1 || first.Strong != 1 || first.Items != 2 || first.Katex != 3 || !strings.HasPrefix(first.Mark, "So the answer is ") ||
		!strings.HasSuffix(first.Mark, "|katex") {
		t.Errorf("rendered completion %+v; want a heading, bold, two list items, three typeset formulas and the marked answer line", first)
	}
	live := `document.querySelectorAll("main img, main [onerror], main [ontoggle], .completion-md details, .completion-md a").length +
		Array.from(document.querySelectorAll("[href]")).filter(a => /^\s*javascript:/i.test(a.getAttribute("href"))).length`
	if n := eval[int](t, b, `(document.querySelectorAll("details.sample").forEach(d => { d.open = true; }), `+live+`)`); n != 0 {
		t.Errorf("%d live images, handlers or javascript: links in the rendered completions; want none", n)
	}
	text := eval[string](t, b, `Array.from(document.querySelectorAll(".completion-md")).map(p => p.innerText).join("\n")`)
	for _, s := range []string{"<details open ontoggle=", `<img src=x onerror=`, "![p](https://127.0.0.1:1/track.png)", "click", "bold link"} {
		if !strings.Contains(text, s) {
			t.Errorf("rendered completions do not show %q as text", s)
		}
	}
	b.noScriptRan(t)

	// The raw toggle, remembered in this browser.
	shown := func() []int {
		return eval[[]int](t, b, `[document.querySelectorAll(".completion-md:not([hidden])").length, document.querySelectorAll("pre.completion:not([hidden])").length]`)
	}
	if got := shown(); !slices.Equal(got, []int{12, 0}) {
		t.Fatalf("rendered and raw completions shown %v; want [12 0] (rendered first)", got)
	}
	b.do(t, "show the raw text", chromedp.Click(chromedp.CSS("#completion-view")))
	if got := shown(); !slices.Equal(got, []int{0, 12}) {
		t.Errorf("after the toggle, rendered and raw shown %v; want [0 12]", got)
	}
	if raw := eval[string](t, b, `document.querySelector("pre.completion").textContent`); !strings.HasPrefix(raw, "## Plan\n\nWe add **one**") {
		t.Errorf("raw text starts %q; want the markdown as written", raw[:min(len(raw), 40)])
	}
	b.open(t, a.url+page)
	if got := shown(); !slices.Equal(got, []int{0, 12}) {
		t.Errorf("after a reload, rendered and raw shown %v; want [0 12] (remembered)", got)
	}
	b.do(t, "show the rendered markdown", chromedp.Click(chromedp.CSS("#completion-view")))
	if got := shown(); !slices.Equal(got, []int{12, 0}) {
		t.Errorf("toggled back, rendered and raw shown %v; want [12 0]", got)
	}
	eval[bool](t, b, `(document.querySelector("#samples").scrollIntoView(), true)`)
	b.screenshot(t, "problem-markdown")
	b.noScriptRan(t)
	b.checkConsole(t)
}

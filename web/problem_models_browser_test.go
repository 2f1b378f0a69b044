package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/store"
)

// On a problem page of four models the sections of the two beyond the pair
// are closed; opening one loads its samples (typeset, the hostile text as
// text, in the raw or rendered view the page is in), and a link to a
// sample of a closed model opens its section at that sample.
func TestBrowserProblemClosedModels(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 90*time.Second)
	b.signIn(t, a)
	ctx := context.Background()
	steps := []int{100, 200, 300}
	runs := []store.NewRun{{ModelName: "base", Role: "base"}}
	for i := range steps {
		runs = append(runs, store.NewRun{ModelName: fmt.Sprintf("step-%d", steps[i]), Role: "checkpoint", Step: &steps[i]})
	}
	sc := storeReady(t, a.st, "closed models", 0, twoProblems("p0", "What is $1+1$?"), runs, 4,
		func(run int, p store.Problem, i int) bool { return p.Key == "p1" || i < run })
	p0 := sc.Ps[0].ID
	texts := map[int]string{2: "Half of it: $\\frac{1}{2}$ then **two**.", 3: `So $x^2$ <img src=x onerror="window.__xss=4"> model-three`}
	for m, text := range texts {
		if _, err := a.st.Pool().Exec(ctx, `UPDATE samples SET completion = $1 WHERE run_id = $2 AND problem_id = $3`, text, sc.Runs[m].ID, p0); err != nil {
			t.Fatal(err)
		}
	}
	problem := fmt.Sprintf("%s/comparisons/%d/problems/%d", a.url, sc.ID, p0)
	run := func(m int) string { return fmt.Sprintf("#run-%d", sc.Runs[m].ID) }
	boxes := func(m int) int {
		return eval[int](t, b, fmt.Sprintf(`document.querySelectorAll(%q).length`, run(m)+" details.sample"))
	}
	waitBoxes := func(m int) {
		t.Helper()
		b.waitFor(t, fmt.Sprintf("model %d's samples", m), fmt.Sprintf(`document.querySelectorAll(%q).length === 4 ? "yes" : ""`, run(m)+" details.sample"), 10*time.Second)
	}

	b.open(t, problem)
	for m, want := range []int{4, 4, 0, 0} {
		if got := boxes(m); got != want {
			t.Errorf("model %d: %d sample boxes at first, want %d", m, got, want)
		}
	}
	if n := eval[int](t, b, `document.querySelectorAll("details.model-closed:not([open])").length`); n != 2 {
		t.Errorf("%d closed model sections, want 2", n)
	}

	// Open model 3: its samples load, typeset, the hostile text as text.
	b.do(t, "open model 3", chromedp.Click(chromedp.CSS(run(3)+" > summary")))
	waitBoxes(3)
	b.waitFor(t, "KaTeX in model 3's samples", fmt.Sprintf(`document.querySelector(%q) ? "yes" : ""`, run(3)+" .completion-md .katex"), 10*time.Second)
	b.noScriptRan(t)
	if n := eval[int](t, b, `document.querySelectorAll("main img, [onerror]").length`); n != 0 {
		t.Errorf("%d img elements or handlers after loading model 3, want none", n)
	}
	if txt := eval[string](t, b, fmt.Sprintf(`document.querySelector(%q).innerText`, run(3)+" details.sample")); !strings.Contains(txt, "<img src=x") {
		t.Errorf("model 3's first sample %q does not show the hostile text as text", txt)
	}

	// In the raw view, a section opened later shows raw text too, and the
	// button turns it back with the rest.
	b.do(t, "show raw text", chromedp.Click(chromedp.CSS("#completion-view")))
	b.do(t, "open model 2", chromedp.Click(chromedp.CSS(run(2)+" > summary")))
	waitBoxes(2)
	shown := func(m int) string {
		return eval[string](t, b, fmt.Sprintf(`(() => {
			const d = document.querySelector(%q);
			return (d.querySelector(".completion-md").hidden ? "" : "md") + (d.querySelector("pre.completion").hidden ? "" : "raw");
		})()`, run(m)+" details.sample-correct"))
	}
	if got := shown(2); got != "raw" {
		t.Errorf("model 2 loaded in the raw view shows %q, want raw", got)
	}
	b.do(t, "show rendered markdown", chromedp.Click(chromedp.CSS("#completion-view")))
	if got := shown(2); got != "md" {
		t.Errorf("model 2 after switching back shows %q, want md", got)
	}
	b.waitFor(t, "KaTeX in model 2's samples", fmt.Sprintf(`document.querySelector(%q) ? "yes" : ""`, run(2)+" .completion-md .katex"), 10*time.Second)

	// The pair is side by side whatever its place; the closed models
	// follow, below it.
	b.open(t, problem+"?pair=3")
	tops := eval[[]float64](t, b, fmt.Sprintf(`[%q, %q, %q].map(s => document.querySelector(s).getBoundingClientRect().top + scrollY)`, run(0), run(3), run(1)))
	if tops[0] != tops[1] || tops[2] <= tops[0] {
		t.Errorf("tops of base, model 3 and model 1 with ?pair=3: %v; want the first two side by side, the closed model 1 below", tops)
	}

	// A link to a sample of a closed model opens it there.
	target := fmt.Sprintf("sample-%d-2", sc.Runs[3].ID)
	b.open(t, problem+"?pair=1#"+target)
	b.waitFor(t, "the linked sample", fmt.Sprintf(`document.getElementById(%q) && document.querySelector(%q).open ? "yes" : ""`, target, run(3)), 10*time.Second)
	if n := boxes(2); n != 0 {
		t.Errorf("model 2 shows %d boxes after a link to model 3, want 0 (still closed)", n)
	}
	b.noScriptRan(t)
	b.checkConsole(t)
}

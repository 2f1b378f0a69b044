package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/intake"
)

// TestBrowserCollectionOverlay (issue 14, comparing runs): two small
// comparisons, a collection made on /collections, both added from the
// collection's page with its select; the overlay chart then has one pass@k
// curve per model of each comparison, named "comparison · model", the
// table one row per model (with the report's k* label), and a model name holding markup shows as text.
func TestBrowserCollectionOverlay(t *testing.T) {
	a := startApp(t)
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, body string) intake.File {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return intake.LocalFile(p)
	}
	ds := write("dataset.jsonl", `{"id": "t1", "problem": "What is 2+3?", "answer": "5"}
{"id": "t2", "problem": "x + 3 = 10. What is x?", "answer": "7"}
`)
	// Base solves t1 once in two samples and t2 always; RL solves t1 always, t2 never.
	base := write("base.jsonl", `{"problem_id": "t1", "sample_index": 0, "completion": "\\boxed{5}"}
{"problem_id": "t1", "sample_index": 1, "completion": "\\boxed{6}"}
{"problem_id": "t2", "sample_index": 0, "completion": "\\boxed{7}"}
{"problem_id": "t2", "sample_index": 1, "completion": "\\boxed{7}"}
`)
	rl := write("rl.jsonl", `{"problem_id": "t1", "sample_index": 0, "completion": "\\boxed{5}"}
{"problem_id": "t1", "sample_index": 1, "completion": "\\boxed{5}"}
{"problem_id": "t2", "sample_index": 0, "completion": "\\boxed{8}"}
{"problem_id": "t2", "sample_index": 1, "completion": "\\boxed{8}"}
`)
	const markup = `RL <i id="injected">x</i>`
	var ids []int64
	for i, rlName := range []string{"RL", markup} {
		id, _, err := intake.Create(ctx, a.st, a.client, intake.Spec{Name: fmt.Sprintf("run %d", i+1), Dataset: ds,
			Models: []intake.Model{{Name: "Base", File: base}, {Name: rlName, File: rl}}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		a.waitReady(t, id, 2*time.Minute)
	}

	b := newBrowser(t, 3*time.Minute)
	b.signIn(t, a)
	b.open(t, a.url+"/collections")
	b.do(t, "name the collection", chromedp.SendKeys(chromedp.CSS(`#collection-form input[name="name"]`), "Two runs"))
	b.clickAndWait(t, `#collection-form button[type="submit"]`, regexp.MustCompile(`^/collections/\d+$`))
	for i, id := range ids {
		b.do(t, "choose a comparison", chromedp.SetValue(chromedp.CSS(`#add-comparison select[name="comparison_id"]`), fmt.Sprint(id)))
		b.do(t, "add it", chromedp.Click(chromedp.CSS(`#add-comparison button[type="submit"]`)))
		// The same URL comes back: wait for the new page's list.
		b.waitFor(t, fmt.Sprintf("%d comparisons in the collection", i+1), fmt.Sprintf(`(() => {
			const n = document.querySelectorAll("#collection-items li").length;
			return document.readyState === "complete" && n === %d ? "yes" : "";
		})()`, i+1), 15*time.Second)
	}
	cs := b.waitChart(t, "#overlay-chart")
	b.screenshot(t, "collection-page")
	want := []string{"run 1 · Base", "run 1 · RL", "run 2 · Base", "run 2 · " + markup}
	if !slices.Equal(cs.Series, want) {
		t.Errorf("overlay series %q; want %q", cs.Series, want)
	}
	if cs.Painted == 0 {
		t.Error("overlay chart canvas is blank")
	}
	rows := eval[[]string](t, b, `[...document.querySelectorAll("#collection-table tbody tr")].map(tr => [...tr.cells].map(c => c.innerText.trim()).join(" | "))`)
	wantRows := []string{
		"run 1 | Base | 2 | 75.0% | 100.0% | —",
		"run 1 | RL | 2 | 50.0% | 50.0% | base model ahead from k = 1",
		"run 2 | Base | 2 | 75.0% | 100.0% | —",
		"run 2 | " + markup + " | 2 | 50.0% | 50.0% | base model ahead from k = 1",
	}
	if !slices.Equal(rows, wantRows) {
		t.Errorf("table rows %q; want %q", rows, wantRows)
	}
	if eval[bool](t, b, `!!document.querySelector("#injected")`) {
		t.Error("a model name's markup became an element")
	}
	// The list page counts both comparisons.
	collection := eval[string](t, b, `location.pathname`)
	b.open(t, a.url+"/collections")
	if got := eval[string](t, b, `document.querySelector("#collections tbody tr").innerText`); !regexp.MustCompile(`Two runs\s+\S.*\s+2$`).MatchString(got) {
		t.Errorf("collections list row %q; want Two runs with 2 comparisons", got)
	}

	// Reorder: run 2 up, first in the list, the overlay and the table.
	b.open(t, a.url+collection)
	if n := eval[int](t, b, `document.querySelectorAll("#collection-items li:first-child .move-up, #collection-items li:last-child .move-down").length`); n != 0 {
		t.Error("the first comparison can move up or the last down")
	}
	b.do(t, "move run 2 up", chromedp.Click(chromedp.CSS(`#collection-items li:last-child .move-up`)))
	b.waitFor(t, "run 2 first", `(() => {
		const a = document.querySelector("#collection-items li:first-child a");
		return document.readyState === "complete" && a && a.textContent === "run 2" ? "yes" : "";
	})()`, 15*time.Second)
	cs = b.waitChart(t, "#overlay-chart")
	if want := []string{"run 2 · Base", "run 2 · " + markup, "run 1 · Base", "run 1 · RL"}; !slices.Equal(cs.Series, want) {
		t.Errorf("overlay series after the move %q; want %q", cs.Series, want)
	}
	// Rename.
	b.do(t, "open rename", chromedp.Click(chromedp.CSS(`#rename-collection summary`)))
	b.do(t, "rename", chromedp.SetValue(chromedp.CSS(`#rename-form input[name="name"]`), "Budgets: 1k vs 2k"))
	b.clickAndWait(t, `#rename-form button[type="submit"]`, regexp.MustCompile(`^/collections/\d+$`))
	b.waitFor(t, "the new name", `document.querySelector("#collection-name").textContent === "Budgets: 1k vs 2k" ? "yes" : ""`, 15*time.Second)

	// Share: a read-only page of the overlay and table, without links into the instance.
	b.clickAndWait(t, "#share-collection", regexp.MustCompile(`^/collections/\d+/shares$`))
	b.do(t, "label the link", chromedp.SendKeys(chromedp.CSS(`#share-form input[name="label"]`), "reviewers"))
	b.do(t, "create the link", chromedp.Click(chromedp.CSS("#create-share")))
	shareURL := b.waitFor(t, "the new share link", `(document.querySelector("#share-url") || {}).textContent || ""`, 15*time.Second)
	f := b.freshTab(t)
	f.open(t, shareURL)
	scs := f.waitChart(t, "#overlay-chart")
	if !slices.Equal(scs.Series, cs.Series) || scs.Painted == 0 {
		t.Errorf("shared overlay series %q (painted %d); want %q", scs.Series, scs.Painted, cs.Series)
	}
	srows := eval[[]string](t, f, `[...document.querySelectorAll("#collection-table tbody tr")].map(tr => [...tr.cells].map(c => c.innerText.trim()).join(" | "))`)
	if want := append(append([]string{}, wantRows[2:]...), wantRows[:2]...); !slices.Equal(srows, want) {
		t.Errorf("shared table rows %q; want %q", srows, want)
	}
	if n := eval[int](t, f, `document.querySelectorAll("a[href^='/'], nav, #who, form").length`); n != 0 {
		t.Errorf("the shared collection page has %d links or controls of the instance", n)
	}
	if h := eval[string](t, f, `document.querySelector("h1").textContent`); h != "Budgets: 1k vs 2k" {
		t.Errorf("shared heading %q", h)
	}
	f.screenshot(t, "collection-shared")
	f.checkConsole(t)

	// Delete, after the confirmation page: the link is gone with it, the comparisons stay.
	b.open(t, a.url+collection)
	b.clickAndWait(t, "#delete-collection", regexp.MustCompile(`^/collections/\d+/delete$`))
	if txt := eval[string](t, b, `document.querySelector("main").innerText`); !strings.Contains(txt, "1 live share link (") || !strings.Contains(txt, "2 comparisons stay") {
		t.Errorf("delete confirmation says %q", txt)
	}
	b.clickAndWait(t, "#confirm-delete-collection", regexp.MustCompile(`^/collections$`))
	if n := eval[int](t, b, `document.querySelectorAll("#collections tbody tr").length`); n != 0 {
		t.Errorf("%d collections listed after the delete", n)
	}
	if resp, err := chromedp.Run(f.ctx, chromedp.NavigateResponse(shareURL)); err != nil || resp.Status != 404 {
		t.Errorf("share link of the deleted collection: %v %v, want HTTP 404", resp, err)
	}
	for _, id := range ids {
		if _, err := a.st.GetComparison(ctx, id); err != nil {
			t.Errorf("comparison %d went with the collection: %v", id, err)
		}
	}
	b.checkConsole(t)
}

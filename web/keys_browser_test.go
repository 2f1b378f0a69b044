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

// Opened from a sorted problem table, the problem page moves through that
// list: j / k to the next / previous problem whatever its solved set or
// review, J / K to the next / previous unreviewed one; ? lists the keys,
// a digit gives a verdict, and the reviewer stays in the list after it.
func TestBrowserKeysThroughList(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 90*time.Second)
	b.signIn(t, a)
	id := teamPair(t, a, "keys pair", "base", "rl", []string{"The answer is 2.", "I think 3."})
	ctx := context.Background()
	c, err := a.st.GetComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := a.st.Problems(ctx, *c.DatasetID, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Key == "t2" {
			if err := a.st.SetReview(ctx, store.Review{ComparisonID: id, ProblemID: p.ID, Verdict: store.VerdictGenuine}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The list: every problem, by key descending: t5 t4 t3 t2 t1.
	b.open(t, fmt.Sprintf("%s/comparisons/%d?sort=problem&dir=desc#problems", a.url, id))
	b.waitReport(t)
	if got := strings.Join(keys(b.tableRows(t)), " "); got != "t5 t4 t3 t2 t1" {
		t.Fatalf("table sorted by problem, descending: %s", got)
	}
	b.clickAndWait(t, `#problem-table tr[data-key="t5"] a`, problemPath)
	at := func() string {
		return eval[string](t, b, `document.querySelector("h1").textContent.trim().replace("Problem ", "") + " " + ((document.querySelector("#list-position") || {}).textContent || "").replace(/\s+/g, " ").trim()`)
	}
	if got := at(); got != "t5 · problem 1 of 5" {
		t.Fatalf("first problem of the list: %q", got)
	}
	press := func(key, want string) {
		t.Helper()
		from := eval[string](t, b, `document.querySelector("h1").textContent.trim()`)
		b.do(t, "press "+key, chromedp.KeyEvent(key))
		b.waitFor(t, "another problem after "+key, fmt.Sprintf(`(() => { const h = document.querySelector("h1"); return document.readyState === "complete" && h && h.textContent.trim() !== %q ? "ok" : ""; })()`, from), 10*time.Second)
		if got := at(); got != want {
			t.Fatalf("%s from %s: %q, want %q", key, from, got, want)
		}
	}
	press("j", "t4 · problem 2 of 5") // both solved: another solved set
	press("j", "t3 · problem 3 of 5")
	press("J", "t1 · problem 5 of 5") // t2 is reviewed
	if n := eval[int](t, b, `document.querySelectorAll("#next-problem, #next-unreviewed").length`); n != 0 {
		t.Errorf("the list's last problem offers %d next links", n)
	}
	press("k", "t2 · problem 4 of 5") // reviewed, but in the list
	press("K", "t3 · problem 3 of 5")

	// ? shows the keys, Esc hides them.
	b.do(t, "press ?", chromedp.KeyEvent("?"))
	help := eval[string](t, b, `(() => { const h = document.querySelector("#shortcuts"); return h.hidden ? "" : h.innerText; })()`)
	for _, k := range []string{"j / k", "J / K", "?", "1", "genuine"} {
		if !strings.Contains(help, k) {
			t.Errorf("the shortcuts list %q lacks %q", help, k)
		}
	}
	b.do(t, "press Escape", chromedp.KeyEvent("\u001b"))
	if hidden := eval[bool](t, b, `document.querySelector("#shortcuts").hidden`); !hidden {
		t.Error("Esc did not hide the shortcuts")
	}

	// 2 gives t3 the second verdict; the page stays in the list.
	want := eval[string](t, b, `document.querySelector('#review-form button[data-shortcut="2"]').value`)
	b.do(t, "press 2", chromedp.KeyEvent("2"))
	b.waitFor(t, "the verdict", fmt.Sprintf(`(() => { const e = document.querySelector("#current-verdict"); return document.readyState === "complete" && e && e.dataset.verdict === %q ? "ok" : ""; })()`, want), 10*time.Second)
	if got := at(); got != "t3 · problem 3 of 5" {
		t.Errorf("after the verdict: %q, want t3 still in the list", got)
	}
	press("J", "t1 · problem 5 of 5")
	press("K", "t4 · problem 2 of 5") // t3 and t2 reviewed now
	b.checkConsole(t)
}

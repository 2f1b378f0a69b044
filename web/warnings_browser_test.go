package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/intake"
)

// writeBudgetFixture writes a 20-problem dataset and two counts files: both
// models have n = 64 except problem q19 (n = 8 for both: it cuts k max to 8)
// and problem q3, where the RL model has only n = 32 (unequal budgets).
func writeBudgetFixture(t *testing.T) (dataset, base, rl string) {
	t.Helper()
	dir := t.TempDir()
	var ds, b, r strings.Builder
	b.WriteString("problem_id,n,correct\n")
	r.WriteString("problem_id,n,correct\n")
	for i := range 20 {
		fmt.Fprintf(&ds, `{"unique_id": "q%d", "problem": "What is $%d \\cdot 7$?", "answer": "%d"}`+"\n", i, i+3, 7*(i+3))
		nb, nr := 64, 64
		switch i {
		case 19:
			nb, nr = 8, 8
		case 3:
			nr = 32
		}
		fmt.Fprintf(&b, "q%d,%d,%d\n", i, nb, (i*7)%(nb+1))
		fmt.Fprintf(&r, "q%d,%d,%d\n", i, nr, (i*13+5)%(nr+1))
	}
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("ds.jsonl", ds.String()), write("base.csv", b.String()), write("rl.csv", r.String())
}

// Issue 9: warnings about the figures are listed at the top of the
// comparison page, each naming what it affects; "leave out" recomputes the
// page up to the larger k max and says what was left out.
func TestBrowserWarningsAtTop(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 90*time.Second)
	b.signIn(t, a)
	ds, base, rl := writeBudgetFixture(t)
	id, _, err := intake.Create(context.Background(), a.st, a.client, intake.Spec{Name: "budgets",
		Dataset: intake.LocalFile(ds),
		Models:  []intake.Model{{Name: "Base", Role: "base", File: intake.LocalFile(base)}, {Name: "RL", Role: "rl", File: intake.LocalFile(rl)}}})
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t, id, 60*time.Second)

	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
	b.waitReport(t)
	// The warnings come before everything else the report shows.
	order := eval[string](t, b, `(() => {
		const w = document.querySelector("#warnings");
		if (!w) return "no #warnings";
		for (const sel of [".lead", "#variant-bar", "#headline", "#crossover-chart", "#problems"]) {
			const e = document.querySelector(sel);
			if (e && !(w.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING)) return "#warnings is not above " + sel;
		}
		return "ok";
	})()`)
	if order != "ok" {
		t.Fatal(order)
	}
	codes := eval[[]string](t, b, `Array.from(document.querySelectorAll("#warnings li")).map(li => li.dataset.code + "|" + li.textContent.replace(/\s+/g, " "))`)
	found := map[string]string{}
	for _, c := range codes {
		code, text, _ := strings.Cut(c, "|")
		found[code] = text
	}
	if !strings.Contains(found["k-max-cut"], "k max is 8") || !strings.Contains(found["k-max-cut"], "Affects: pass@k") {
		t.Errorf("k-max-cut warning %q (all: %q)", found["k-max-cut"], codes)
	}
	if !strings.Contains(found["unequal-budgets"], "Budgets differ") || !strings.Contains(found["unequal-budgets"], "Affects: solved sets") {
		t.Errorf("unequal-budgets warning %q", found["unequal-budgets"])
	}
	// The Venn says it too.
	if note := eval[string](t, b, `(document.querySelector("#venn-1 .budget-note") || {}).textContent || ""`); !strings.Contains(note, "Budgets differ on 1 problem:") {
		t.Errorf("Venn budget note %q", note)
	}

	// Leaving the two short problems out compares up to k = 64.
	b.clickAndWait(t, `#warnings a[data-warning-action="k-max-cut"]`, regexp.MustCompile(`[?&]min_n=64`))
	b.waitReport(t)
	if lead := eval[string](t, b, `document.querySelector(".lead").textContent`); !strings.Contains(lead, "18 problems") || !strings.Contains(lead, "k up to 64") {
		t.Errorf("after leaving out: lead %q", lead)
	}
	left := eval[string](t, b, `(document.querySelector('#warnings li[data-code="short-problems-left-out"]') || {}).textContent || ""`)
	if !strings.Contains(left, "2 problems with fewer than 64 samples from some model are left out") {
		t.Errorf("left-out note %q", left)
	}
	if n := eval[int](t, b, `document.querySelectorAll('#warnings li[data-code="k-max-cut"], #warnings li[data-code="unequal-budgets"]').length`); n != 0 {
		t.Errorf("%d budget warnings remain after leaving the short problems out", n)
	}
	// Toggles keep the variant.
	if href := eval[string](t, b, `document.querySelector("#toggle-estimator").getAttribute("href")`); !strings.Contains(href, "min_n=64") {
		t.Errorf("estimator toggle %q drops min_n", href)
	}
	b.clickAndWait(t, `#warnings a[data-warning-action="short-problems-left-out"]`, regexp.MustCompile(fmt.Sprintf(`^/comparisons/%d$`, id)))
	b.checkConsole(t)
}

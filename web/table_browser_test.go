package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/benchdata"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/store"
)

// tableRow is one row of the problem table as the browser shows it.
type tableRow struct {
	Key     string  `json:"key"`
	Preview string  `json:"preview"`
	Subject string  `json:"subject"`
	Diff    float64 `json:"diff"`
	P       string  `json:"p"`
}

func (b *browser) tableRows(t *testing.T) []tableRow {
	t.Helper()
	return eval[[]tableRow](t, b, `(() => {
		const head = Array.from(document.querySelectorAll("#problem-table thead th"));
		const col = name => head.findIndex(th => th.dataset.sort === name);
		const subject = col("subject"), p = col("p");
		return Array.from(document.querySelectorAll("#problem-table tbody tr")).map(r => ({
			key: r.dataset.key,
			preview: r.querySelector("td.preview").textContent,
			subject: subject >= 0 ? r.cells[subject].textContent.trim() : "",
			diff: parseFloat(r.querySelector("td.diff").textContent),
			p: r.cells[p].firstChild ? r.cells[p].firstChild.textContent.trim() : "",
		}));
	})()`)
}

// query reads the tab's location query.
func (b *browser) query(t *testing.T) url.Values {
	t.Helper()
	q, err := url.ParseQuery(strings.TrimPrefix(eval[string](t, b, `location.search`), "?"))
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// At 12,500 problems the table shows 100 rows a page; clicking a column
// header sorts all 12,500 on the server (the order runs on across
// pages), clicking it again reverses it; statement search finds the
// problems whose statements have the word (stemmed: "hexagons" finds
// "hexagon"), and the URL keeps the view.
func TestBrowserProblemTablePagingSorting(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 150*time.Second)
	b.signIn(t, a)
	ctx := context.Background()
	id, _, err := benchdata.Create(ctx, a.st, benchdata.Spec{Models: 2, N: 16, Problems: 12500, Seed: 7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.st.GetComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := a.st.Problems(ctx, *c.DatasetID, true)
	if err != nil {
		t.Fatal(err)
	}

	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
	b.waitReport(t)
	pager := func() []string {
		return eval[[]string](t, b, `(() => { const p = document.querySelector("#table-pager"); return [p.dataset.matching, p.dataset.page, p.dataset.pages]; })()`)
	}
	if got := pager(); !slices.Equal(got, []string{"12500", "1", "125"}) {
		t.Fatalf("pager (matching, page, pages) %q, want 12500 problems on 125 pages", got)
	}
	if rows := b.tableRows(t); len(rows) != 100 || rows[0].Preview == "" || strings.Contains(rows[0].Preview, "\n") {
		t.Fatalf("first page: %d rows, first preview %q; want 100 rows with one-line previews", len(rows), rows[0].Preview)
	}

	// Sort by the difference: descending first, over every page.
	b.clickAndWait(t, `#problem-table th[data-sort="diff"] a`, regexp.MustCompile(`[?&]sort=diff`))
	if s := eval[string](t, b, `document.querySelector('#problem-table th[data-sort="diff"]').getAttribute("aria-sort")`); s != "descending" {
		t.Errorf("aria-sort of the difference column %q, want descending", s)
	}
	page1 := b.tableRows(t)
	isSorted := func(rows []tableRow, desc bool) bool {
		return slices.IsSortedFunc(rows, func(x, y tableRow) int {
			if desc {
				x, y = y, x
			}
			switch {
			case x.Diff < y.Diff:
				return -1
			case x.Diff > y.Diff:
				return 1
			}
			return 0
		})
	}
	if !isSorted(page1, true) || len(page1) != 100 {
		t.Fatalf("page 1 sorted by difference, descending: %d rows, sorted %v", len(page1), isSorted(page1, true))
	}
	b.clickAndWait(t, "#page-next", regexp.MustCompile(`[?&]page=2`))
	if q := b.query(t); q.Get("sort") != "diff" {
		t.Errorf("page 2's URL %v lost the sort", q)
	}
	page2 := b.tableRows(t)
	if !isSorted(page2, true) || page2[0].Diff > page1[99].Diff {
		t.Errorf("page 2 does not continue page 1's order: page 1 ends at %+.1f, page 2 starts at %+.1f", page1[99].Diff, page2[0].Diff)
	}
	// Again: ascending, from page 1.
	b.clickAndWait(t, `#problem-table th[data-sort="diff"] a`, regexp.MustCompile(`[?&]dir=asc`))
	up := b.tableRows(t)
	if !isSorted(up, false) || up[0].Diff >= page1[0].Diff || b.query(t).Get("page") != "" {
		t.Errorf("ascending: sorted %v, first %+.1f (descending's first %+.1f), page %q", isSorted(up, false), up[0].Diff, page1[0].Diff, b.query(t).Get("page"))
	}

	// p-values ascending first; problems without one last.
	b.clickAndWait(t, `#problem-table th[data-sort="p"] a`, regexp.MustCompile(`[?&]sort=p`))
	ps := b.tableRows(t)
	var pv []float64
	for _, r := range ps {
		if r.P == "" {
			continue
		}
		x, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimPrefix(r.P, "< "), "<"), 64)
		if err != nil {
			t.Fatalf("p-value %q: %v", r.P, err)
		}
		pv = append(pv, x)
	}
	if len(pv) == 0 || !slices.IsSorted(pv) {
		t.Errorf("sorted by p: %v, want ascending p-values first", pv)
	}

	// Subject, ascending, filtered to one subject keeps the sort.
	b.clickAndWait(t, `#problem-table th[data-sort="subject"] a`, regexp.MustCompile(`[?&]sort=subject`))
	subs := b.tableRows(t)
	if !slices.IsSortedFunc(subs, func(x, y tableRow) int { return strings.Compare(x.Subject, y.Subject) }) {
		t.Errorf("sorted by subject: %q … %q", subs[0].Subject, subs[len(subs)-1].Subject)
	}

	eval[bool](t, b, `(document.querySelector("#problems").scrollIntoView(), true)`)
	b.screenshot(t, "problem-table-sorted")
	// Search the statements: a plural finds the singular (stemming).
	want := 0
	for _, p := range problems {
		if strings.Contains(strings.ToLower(p.Statement), "hexagon") {
			want++
		}
	}
	if want == 0 {
		t.Fatal("no MATH500 statement mentions a hexagon")
	}
	b.do(t, "search for hexagons", chromedp.SetValue(chromedp.CSS(`#table-filters input[name=q]`), "hexagons"))
	b.do(t, "submit the filters", chromedp.Click(chromedp.CSS(`#table-filters button[type=submit]`)))
	b.waitLoaded(t, regexp.MustCompile(`[?&]q=hexagons`))
	found := b.tableRows(t)
	if got := pager()[0]; got != strconv.Itoa(want) {
		t.Errorf("search for hexagons: %s problems, want the %d whose statements mention a hexagon", got, want)
	}
	for _, r := range found {
		if !strings.Contains(strings.ToLower(r.Preview), "hexagon") && len(r.Preview) < 200 {
			t.Errorf("problem %s found for hexagons: %q", r.Key, r.Preview)
		}
	}
	if !slices.IsSortedFunc(found, func(x, y tableRow) int { return strings.Compare(x.Subject, y.Subject) }) {
		t.Error("the search lost the sort by subject")
	}

	// The URL is a permalink: opened afresh it shows the same view.
	here := eval[string](t, b, `location.href`)
	f := b.freshTab(t)
	f.signIn(t, a, "second@reach.test")
	f.open(t, here)
	if got := f.tableRows(t); !slices.Equal(keys(got), keys(found)) {
		t.Errorf("the permalink shows %q, the page showed %q", keys(got), keys(found))
	}
	if v := eval[string](t, f, `document.querySelector("#table-filters input[name=q]").value + "|" + document.querySelector('#problem-table th[data-sort="subject"]').getAttribute("aria-sort")`); v != "hexagons|ascending" {
		t.Errorf("the permalink's search box and sort: %q", v)
	}
	b.checkConsole(t)
}

func keys(rows []tableRow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Key)
	}
	return out
}

// Search in completions (literal text), and the filters by review
// verdict, finish reason and extracted answer, on a small pair graded by
// Reach's math verifier.
func TestBrowserProblemTableSearchAndFilters(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 90*time.Second)
	b.signIn(t, a)
	line := func(v any) string {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(j) + "\n"
	}
	statements := map[string]string{
		"f1": "What is $1+1$?", "f2": "A regular hexagon has side 1. What is its perimeter?", "f3": "What is $2+1$?",
		"f4": "What is $2+2$?", "f5": "Each side of a hexagon is 2. What is the perimeter?", "f6": "What is $3+3$?",
	}
	answers := map[string]string{"f1": "2", "f2": "6", "f3": "3", "f4": "4", "f5": "12", "f6": "6"}
	var dataset string
	for i := 1; i <= 6; i++ {
		k := fmt.Sprintf("f%d", i)
		dataset += line(map[string]string{"id": k, "problem": statements[k], "answer": answers[k]})
	}
	samples := func(m int) string {
		var s string
		for i := 1; i <= 6; i++ {
			k := fmt.Sprintf("f%d", i)
			for j := range 2 {
				text, finish := fmt.Sprintf("So the answer is $\\boxed{%s}$.", answers[k]), "stop"
				switch {
				case k == "f3" && m == 0 && j == 1:
					text = "Wait, recheck: 2+1 is 3. So $\\boxed{3}$."
				case k == "f4" && m == 1 && j == 0:
					text = "I get $\\boxed{17}$."
				case k == "f6" && m == 1 && j == 1:
					text, finish = "Let me think about 3+3 for a very long", "length"
				}
				s += line(map[string]any{"problem_id": k, "sample_index": j, "completion": text, "finish_reason": finish})
			}
		}
		return s
	}
	file := func(n, body string) intake.File {
		return intake.File{Name: n, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }}
	}
	ctx := context.Background()
	id, _, err := intake.Create(ctx, a.st, a.client, intake.Spec{Name: "filters", Dataset: file("f.jsonl", dataset),
		Models: []intake.Model{{Name: "base", File: file("base.jsonl", samples(0))}, {Name: "rl", File: file("rl.jsonl", samples(1))}}})
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t, id, 60*time.Second)
	c, err := a.st.GetComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := a.st.Problems(ctx, *c.DatasetID, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Key == "f1" {
			if err := a.st.SetReview(ctx, store.Review{ComparisonID: id, ProblemID: p.ID, Verdict: store.VerdictGenuine}); err != nil {
				t.Fatal(err)
			}
		}
	}

	shown := func(query string) []string {
		t.Helper()
		b.open(t, fmt.Sprintf("%s/comparisons/%d?%s", a.url, id, query))
		b.waitReport(t)
		got := keys(b.tableRows(t))
		slices.Sort(got)
		return got
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"f1", "f2", "f3", "f4", "f5", "f6"}},
		{"q=hexagons", []string{"f2", "f5"}},
		{"q=perimeter+-regular", []string{"f5"}},
		{"q=" + url.QueryEscape("wait, RECHECK") + "&in=completions", []string{"f3"}},
		{"q=" + url.QueryEscape(`\boxed{17}`) + "&in=completions", []string{"f4"}},
		{"q=hexagon&in=both", []string{"f2", "f5"}},
		{"q=17&in=both", []string{"f4"}},
		{"finish=length", []string{"f6"}},
		{"answer=17", []string{"f4"}},
		{"answer=6", []string{"f2", "f6"}},
		{"review=genuine", []string{"f1"}},
		{"review=unreviewed&answer=6", []string{"f2", "f6"}},
		{"review=reviewed", []string{"f1"}},
	} {
		if got := shown(tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("?%s shows %q, want %q", tc.query, got, tc.want)
		}
	}
	// The form shows the view it came from.
	shown("q=abc&in=completions&finish=length&review=lucky&answer=" + url.QueryEscape("<b>x</b>"))
	form := eval[[]string](t, b, `["q", "in", "finish", "review", "answer"].map(n => document.querySelector("#table-filters [name=" + n + "]").value)`)
	if !slices.Equal(form, []string{"abc", "completions", "length", "lucky", "<b>x</b>"}) {
		t.Errorf("filter form %q", form)
	}
	if note := eval[string](t, b, `(document.querySelector("#search-note") || {}).textContent || ""`); !strings.Contains(note, "Completions searched") {
		t.Errorf("search note %q", note)
	}
	b.checkConsole(t)
}

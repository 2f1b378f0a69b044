package web_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Issue 14: the same dataset uploaded twice through the form is stored once
// (both comparisons use it) and offered once under "Use a loaded dataset";
// a different dataset of the same name is offered beside it with what
// tells the two apart (problem count, when each was loaded).
func TestBrowserDatasetUploadedTwice(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ds := write("a/problems.jsonl", `{"id":"a","problem":"1+1?","answer":"2"}
{"id":"b","problem":"2+2?","answer":"4"}
`)
	// The same problems with other spacing and field order, same name.
	dsAgain := write("b/problems.jsonl", `{"answer": "2", "problem": "1+1?", "id": "a"}
{"answer": "4", "problem": "2+2?", "id": "b"}
`)
	dsOther := write("c/problems.jsonl", `{"id":"a","problem":"1+1?","answer":"2"}
{"id":"b","problem":"2+2?","answer":"4"}
{"id":"c","problem":"3+3?","answer":"6"}
`)
	samples := write("samples.jsonl", `{"problem_id":"a","sample_index":0,"completion":"\\boxed{2}","correct":true}
{"problem_id":"b","sample_index":0,"completion":"\\boxed{5}","correct":false}
`)
	a := startApp(t)
	b := newBrowser(t, 3*time.Minute) // three uploads, each until ready: 90 s ran out once under a loaded test run
	b.signIn(t, a)
	progress := regexp.MustCompile(`^/comparisons/(\d+)$`)
	upload := func(name, dataset string) int64 {
		t.Helper()
		b.open(t, a.url+"/comparisons/new")
		row := func(i int, field string) string {
			return "#models .model-row:nth-child(" + strconv.Itoa(i) + ") [name=" + field + "]"
		}
		b.do(t, "fill the form for "+name,
			chromedp.SendKeys(chromedp.CSS("#new-comparison input[name=name]"), name),
			chromedp.SetUploadFiles(chromedp.CSS("input[name=dataset_file]"), []string{dataset}),
			chromedp.SendKeys(chromedp.CSS(row(1, "model_name")), "base"),
			chromedp.SetUploadFiles(chromedp.CSS(row(1, "model_file")), []string{samples}),
			chromedp.SetValue(chromedp.CSS(row(2, "model_role")), "rl"),
			chromedp.SendKeys(chromedp.CSS(row(2, "model_name")), "rl"),
			chromedp.SetUploadFiles(chromedp.CSS(row(2, "model_file")), []string{samples}),
			chromedp.Click(chromedp.CSS(`#new-comparison button[type=submit]`)),
		)
		at := b.waitLoaded(t, progress)
		id, _ := strconv.ParseInt(progress.FindStringSubmatch(at)[1], 10, 64)
		a.waitReady(t, id, 30*time.Second)
		return id
	}
	first := upload("first", ds)
	second := upload("second", dsAgain)
	third := upload("third", dsOther)

	ctx := context.Background()
	datasetOf := func(id int64) int64 {
		c, err := a.st.GetComparison(ctx, id)
		if err != nil || c.DatasetID == nil {
			t.Fatalf("comparison %d: %v", id, err)
		}
		return *c.DatasetID
	}
	if datasetOf(second) != datasetOf(first) {
		t.Errorf("the second upload of the dataset uses dataset %d, the first %d; want one", datasetOf(second), datasetOf(first))
	}
	if datasetOf(third) == datasetOf(first) {
		t.Error("a different dataset uses the first one's")
	}
	var rows int
	if err := a.st.Pool().QueryRow(ctx, `SELECT count(*) FROM datasets`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 2 {
		t.Errorf("%d dataset rows; want 2", rows)
	}

	b.open(t, a.url+"/comparisons/new")
	opts := eval[[]string](t, b, `Array.from(document.querySelectorAll("select[name=dataset_id] option")).filter(o => o.value).map(o => o.textContent)`)
	if len(opts) != 2 {
		t.Fatalf("loaded datasets offered: %q; want 2 (the twice-uploaded one once, and the other)", opts)
	}
	for i, want := range []string{"problems.jsonl · 3 problems · loaded ", "problems.jsonl · 2 problems · loaded "} {
		if !strings.HasPrefix(opts[i], want) || !strings.Contains(opts[i], " UTC") {
			t.Errorf("option %d %q; want it to start %q and say when it was loaded", i, opts[i], want)
		}
	}
	b.checkConsole(t)
}

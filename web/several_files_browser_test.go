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

	"github.com/reach-lab/reach/internal/analysis"
)

// In the browser, several files chosen at once in one model's file picker
// are that model's: NeMo-Skills seed files are pooled into one model, and
// files named by training step ({step}.jsonl, as verl dumps them) become
// one checkpoint per step (issues 21.6, 23.1).
func TestBrowserSeveralFilesPerModel(t *testing.T) {
	tools := filepath.Join("..", "internal", "ingest", "testdata", "tools")
	seeds := []string{filepath.Join(tools, "nemo_skills", "output-rs0.jsonl"), filepath.Join(tools, "nemo_skills", "output-rs1.jsonl")}
	steps := t.TempDir()
	var stepFiles []string
	for i, src := range seeds {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(steps, strconv.Itoa(100*(i+1))+".jsonl")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		stepFiles = append(stepFiles, p)
	}
	for i := range seeds {
		abs, err := filepath.Abs(seeds[i])
		if err != nil {
			t.Fatal(err)
		}
		seeds[i] = abs
	}
	dataset, err := filepath.Abs(filepath.Join(tools, "dataset_words.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	a := startApp(t)
	b := newBrowser(t, 90*time.Second)
	b.signIn(t, a)
	b.open(t, a.url+"/comparisons/new")
	row := func(i int, field string) string {
		return "#models .model-row:nth-child(" + strconv.Itoa(i) + ") [name=" + field + "]"
	}
	b.do(t, "fill the form with two files per model",
		chromedp.SendKeys(chromedp.CSS("#new-comparison input[name=name]"), "seeds and steps"),
		chromedp.SetUploadFiles(chromedp.CSS("input[name=dataset_file]"), []string{dataset}),
		chromedp.SendKeys(chromedp.CSS(row(1, "model_name")), "base"),
		chromedp.SetUploadFiles(chromedp.CSS(row(1, "model_file")), seeds),
		chromedp.SetValue(chromedp.CSS(row(2, "model_role")), "rl"),
		chromedp.SendKeys(chromedp.CSS(row(2, "model_name")), "ppo"),
		chromedp.SetUploadFiles(chromedp.CSS(row(2, "model_file")), stepFiles),
	)
	b.do(t, "submit", chromedp.Click(chromedp.CSS(`#new-comparison button[type=submit]`)))
	at := b.waitLoaded(t, regexp.MustCompile(`^/comparisons/(\d+)(/progress)?$`))
	id, _ := strconv.ParseInt(regexp.MustCompile(`\d+`).FindString(at), 10, 64)
	a.waitReady(t, id, time.Minute)
	rep, err := analysis.Build(context.Background(), a.st, id)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range rep.Models {
		names = append(names, m.Name+" n="+strconv.Itoa(m.N))
	}
	// The two seeds pooled: 2 samples per problem; each step file one checkpoint of 1.
	if got := strings.Join(names, ", "); got != "base n=2, ppo step 100 n=1, ppo step 200 n=1" {
		t.Errorf("models %q; want the seeds pooled and one checkpoint per step file", got)
	}
	b.open(t, a.url+"/comparisons/"+strconv.FormatInt(id, 10))
	b.waitReport(t)
	if src := eval[string](t, b, `document.body.textContent`); !strings.Contains(src, "2 files: output-rs0.jsonl, output-rs1.jsonl") {
		t.Error("the comparison page does not name the base model's two files")
	}
	if n := eval[int](t, b, `document.querySelectorAll("#flow-table tbody tr").length`); n != 2 {
		t.Errorf("flow table rows %d; want the two checkpoints", n)
	}
	b.checkConsole(t)
}

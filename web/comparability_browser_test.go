package web_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Two Inspect logs sampled at different temperatures with different prompt templates, uploaded
// in the browser: the comparison page's settings panel is open and lists both differences with
// each model's value, the warning names them, and the token budget shows as the same
// (issue 25.1).
func TestBrowserComparabilityPanel(t *testing.T) {
	formats := filepath.Join("..", "internal", "testfiles", "cases", "tool-formats")
	tmp := t.TempDir()
	edit := func(role string, temp float64, template string) string {
		matches, _ := filepath.Glob(filepath.Join(formats, "c_inspect_"+role+"_*.json"))
		if len(matches) != 1 {
			t.Fatalf("inspect %s log: %v", role, matches)
		}
		raw, err := os.ReadFile(matches[0])
		if err != nil {
			t.Fatal(err)
		}
		var log map[string]any
		if err := json.Unmarshal(raw, &log); err != nil {
			t.Fatal(err)
		}
		log["eval"].(map[string]any)["model_generate_config"] = map[string]any{"temperature": temp, "max_tokens": 2048}
		log["plan"].(map[string]any)["steps"].([]any)[0].(map[string]any)["params"] = map[string]any{"template": template}
		out, _ := json.Marshal(log)
		p := filepath.Join(tmp, filepath.Base(matches[0]))
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := edit("base", 0.6, "<b>Solve</b>: {prompt}")
	rl := edit("rl", 1.2, "{prompt}")
	dataset, err := filepath.Abs(filepath.Join(formats, "ds_gsm8k_3.jsonl"))
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
	b.do(t, "fill the form",
		chromedp.SendKeys(chromedp.CSS("#new-comparison input[name=name]"), "two temperatures"),
		chromedp.SetUploadFiles(chromedp.CSS("input[name=dataset_file]"), []string{dataset}),
		chromedp.SendKeys(chromedp.CSS(row(1, "model_name")), "base"),
		chromedp.SetUploadFiles(chromedp.CSS(row(1, "model_file")), []string{base}),
		chromedp.SetValue(chromedp.CSS(row(2, "model_role")), "rl"),
		chromedp.SendKeys(chromedp.CSS(row(2, "model_name")), "rl"),
		chromedp.SetUploadFiles(chromedp.CSS(row(2, "model_file")), []string{rl}),
	)
	b.do(t, "submit", chromedp.Click(chromedp.CSS(`#new-comparison button[type=submit]`)))
	at := b.waitLoaded(t, regexp.MustCompile(`^/comparisons/(\d+)(/progress)?$`))
	id, _ := strconv.ParseInt(regexp.MustCompile(`\d+`).FindString(at), 10, 64)
	a.waitReady(t, id, time.Minute)
	b.open(t, a.url+"/comparisons/"+strconv.FormatInt(id, 10))
	b.waitReport(t)
	if !eval[bool](t, b, `document.querySelector("#comparability").open`) {
		t.Error("the settings panel is folded although settings differ")
	}
	rows := eval[[]string](t, b, `Array.from(document.querySelectorAll("#comparability tr.differs")).map(r => r.innerText.replace(/\s+/g, " ").trim())`)
	if got := strings.Join(rows, " | "); got != "temperature 0.6 1.2 | prompt template <b>Solve</b>: {prompt} {prompt}" {
		t.Errorf("differing rows %q", got)
	}
	if n := eval[int](t, b, `document.querySelectorAll("#comparability b").length`); n != 0 {
		t.Error("a template's markup was rendered, not shown as text")
	}
	if same := eval[string](t, b, `document.querySelector("#comparability").innerText`); !strings.Contains(same, "token budget (max new tokens)") {
		t.Errorf("the token budget is not listed as the same: %q", same)
	}
	if w := eval[string](t, b, `document.body.innerText`); !strings.Contains(w, "temperature: base 0.6, rl 1.2") {
		t.Error("no warning naming the temperatures")
	}
	// "Would more samples help?": folded, and every value past n marked extrapolated.
	if got := eval[string](t, b, `document.querySelector("#past-n summary").innerText`); !strings.Contains(got, "past n = 4, extrapolated") {
		t.Errorf("past-n summary %q", got)
	}
	if heads := eval[string](t, b, `document.querySelector("#past-n thead").textContent`); !strings.Contains(heads, "pass@8 (extrapolated)") || !strings.Contains(heads, "pass@16 (extrapolated)") {
		t.Errorf("past-n columns %q", heads)
	}
	b.checkConsole(t)
}

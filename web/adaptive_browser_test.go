package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/replay"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testfiles"
)

// Adaptive sampling through the browser: on a loaded dataset (the GSM8K
// stand-in, 30 problems) the form's budget hint shows the uniform total for
// n, the models and the problems as they are chosen; the setup page states
// the budget; the progress page shows the rounds and the budget spent while
// the design runs; the report's Extend raises the budget and the design
// goes on. No more than the budget is ever drawn.
func TestBrowserAdaptiveSampling(t *testing.T) {
	a := startApp(t)
	ctx := context.Background()
	dir := testfiles.GSM8KProbe(t)
	dataset := filepath.Join(dir, "data/gsm8k_subset.jsonl")
	var urls []string
	for _, f := range []string{"sft_raw.jsonl", "rl_raw.jsonl"} {
		recs, err := replay.Load(ctx, filepath.Join(dir, "results_1024_cuda", f), dataset)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(replay.New(recs, replay.Options{Latency: 50 * time.Millisecond}))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL+"/v1")
	}
	project, err := a.st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var datasetID int64
	err = a.st.WithTx(ctx, func(tx *store.Store) error {
		var err error
		datasetID, _, err = jobs.ImportDataset(ctx, tx, "gsm8k_subset.jsonl", func() (io.ReadCloser, error) { return os.Open(dataset) }, project)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, 2*time.Minute)
	b.signIn(t, a)
	b.open(t, a.url+"/comparisons/sample")
	row := func(i int, name string) string {
		return fmt.Sprintf("#models .endpoint-row:nth-child(%d) [name=%s]", i, name)
	}
	b.do(t, "fill the sampling form",
		chromedp.SendKeys(chromedp.CSS("#new-sampling input[name=name]"), "GSM8K adaptive in the browser"),
		chromedp.SetValue(chromedp.CSS("#new-sampling select[name=dataset_id]"), fmt.Sprint(datasetID)),
		chromedp.SendKeys(chromedp.CSS(row(1, "model_name")), "SFT"),
		chromedp.SendKeys(chromedp.CSS(row(1, "model_url")), urls[0]),
		chromedp.SendKeys(chromedp.CSS(row(1, "model_model")), "sft"),
		chromedp.SendKeys(chromedp.CSS(row(2, "model_name")), "PPO"),
		chromedp.SendKeys(chromedp.CSS(row(2, "model_url")), urls[1]),
		chromedp.SendKeys(chromedp.CSS(row(2, "model_model")), "ppo"),
		chromedp.SetValue(chromedp.CSS("#new-sampling input[name=per_request]"), "4"),
		chromedp.SetValue(chromedp.CSS("#new-sampling select[name=template]"), "gsm8k"),
		chromedp.Click(chromedp.CSS("#new-sampling input[name=adaptive]")),
		chromedp.SetValue(chromedp.CSS("#new-sampling input[name=n]"), "8"),
	)
	// SetValue fires no event: an input event makes the hint recount.
	hint := eval[string](t, b, `(() => {
		document.querySelector("#new-sampling input[name=n]").dispatchEvent(new Event("input", {bubbles: true}));
		return document.getElementById("budget-hint").innerText;
	})()`)
	if want := "8 × 2 × 30 = 480 samples; the budget must be between 120 and 480."; !strings.Contains(hint, want) {
		t.Errorf("budget hint %q; want it to say %q", hint, want)
	}
	b.do(t, "set the budget and submit",
		chromedp.SetValue(chromedp.CSS("#new-sampling input[name=budget]"), "300"),
		chromedp.Click(chromedp.CSS("#new-sampling button[type=submit]")))

	b.waitFor(t, "the setup page", `document.getElementById("start-sampling") ? "yes" : ""`, 30*time.Second)
	path := b.waitLoaded(t, regexp.MustCompile(`^/comparisons/\d+$`))
	id, _ := strconv.ParseInt(strings.TrimPrefix(path, "/comparisons/"), 10, 64)
	setup := eval[string](t, b, `(document.getElementById("adaptive-config") || {}).innerText || ""`)
	if !strings.Contains(setup, "budget 300 samples of the uniform design's 480") {
		t.Errorf("setup page's adaptive line %q", setup)
	}
	b.do(t, "start sampling", chromedp.Click(chromedp.CSS("#start-sampling")))
	seen := watchRounds(t, b)
	a.waitReady(t, id, 30*time.Second)
	if len(seen) == 0 {
		t.Errorf("never saw the adaptive design's progress")
	}
	drawn := func() int64 {
		var n int64
		if err := a.st.Pool().QueryRow(ctx, `SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.comparison_id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := drawn(); n > 300 || n < 120 {
		t.Errorf("%d samples drawn under a budget of 300", n)
	}

	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
	b.do(t, "raise the budget to 400",
		chromedp.SetValue(chromedp.CSS("form.extend input[name=budget]"), "400"),
		chromedp.Click(chromedp.CSS("form.extend button")))
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := a.st.GetComparison(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if cfg, err := jobs.ParseSamplingConfig(c.Sampling); err == nil && cfg.Budget == 400 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("raising the budget to 400 did not start\n%s", b.describe())
		}
	}
	a.waitReady(t, id, time.Minute)
	if n := drawn(); n > 400 {
		t.Errorf("%d samples drawn under a budget of 400", n)
	}
	b.open(t, fmt.Sprintf("%s/comparisons/%d/progress", a.url, id))
	final := eval[string](t, b, `(document.getElementById("adaptive-spent") || {}).innerText || ""`)
	if !strings.Contains(final, fmt.Sprintf("%d of 400 samples", drawn())) {
		t.Errorf("progress after the extension says %q", final)
	}
	t.Logf("adaptive progress seen: %v", seen)
	b.checkConsole(t)
}

// watchRounds follows the progress page until the report opens and returns
// the distinct adaptive summaries it showed.
func watchRounds(t *testing.T, b *browser) []string {
	t.Helper()
	var seen []string
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(() => {
			if (document.getElementById("headline")) return "report";
			const r = document.getElementById("adaptive-rounds"), s = document.getElementById("adaptive-spent");
			return r && s ? r.innerText + " · " + s.innerText : "";
		})()`))
		if err == nil {
			if v == "report" {
				break
			}
			if v != "" && (len(seen) == 0 || seen[len(seen)-1] != v) {
				seen = append(seen, v)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return seen
}

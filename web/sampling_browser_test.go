package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/replay"
	"github.com/reach-lab/reach/internal/testfiles"
)

// An endpoint-backed comparison made through the browser: the form, the
// setup page (prompt preview, test connection), Start sampling, and the
// live progress bars up to 100% and the report.
func TestBrowserSampleFromEndpoints(t *testing.T) { testBrowserSampleFromEndpoints(t) }

// TestBrowserSampleFromEndpointsUnlicensed is TestBrowserSampleFromEndpoints on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestBrowserSampleFromEndpoints runs on the stand-in.
func TestBrowserSampleFromEndpointsUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testBrowserSampleFromEndpoints(t)
}

func testBrowserSampleFromEndpoints(t *testing.T) {
	a := startApp(t)
	dir := testfiles.GSM8KProbe(t)
	dataset := filepath.Join(dir, "data/gsm8k_subset.jsonl")
	var urls []string
	for _, f := range []string{"sft_raw.jsonl", "rl_raw.jsonl"} {
		recs, err := replay.Load(context.Background(), filepath.Join(dir, "results_1024_cuda", f), dataset)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(replay.New(recs, replay.Options{Latency: 150 * time.Millisecond}))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL+"/v1")
	}
	b := newBrowser(t, 2*time.Minute)
	b.signIn(t, a)
	b.open(t, a.url+"/comparisons/sample")
	row := func(i int, name string) string {
		return fmt.Sprintf("#models .endpoint-row:nth-child(%d) [name=%s]", i, name)
	}
	b.do(t, "fill the sampling form",
		chromedp.SendKeys(chromedp.CSS("#new-sampling input[name=name]"), "GSM8K sampled in the browser"),
		chromedp.SetUploadFiles(chromedp.CSS("#new-sampling input[name=dataset_file]"), []string{dataset}),
		chromedp.SendKeys(chromedp.CSS(row(1, "model_name")), "SFT"),
		chromedp.SendKeys(chromedp.CSS(row(1, "model_url")), urls[0]),
		chromedp.SendKeys(chromedp.CSS(row(1, "model_model")), "sft"),
		chromedp.SendKeys(chromedp.CSS(row(2, "model_name")), "PPO"),
		chromedp.SendKeys(chromedp.CSS(row(2, "model_url")), urls[1]),
		chromedp.SendKeys(chromedp.CSS(row(2, "model_model")), "ppo"),
		chromedp.SetValue(chromedp.CSS("#new-sampling input[name=n]"), "8"),
		chromedp.SetValue(chromedp.CSS("#new-sampling input[name=per_request]"), "1"),
		chromedp.SetValue(chromedp.CSS("#new-sampling select[name=template]"), "gsm8k"),
	)
	b.do(t, "submit", chromedp.Click(chromedp.CSS("#new-sampling button[type=submit]")))

	// The dataset loads, then the setup page replaces the progress page.
	b.waitFor(t, "the setup page", `document.getElementById("start-sampling") ? "yes" : ""`, 30*time.Second)
	path := b.waitLoaded(t, regexp.MustCompile(`^/comparisons/\d+$`))
	id, _ := strconv.ParseInt(strings.TrimPrefix(path, "/comparisons/"), 10, 64)
	prompt := eval[string](t, b, `document.getElementById("prompt-preview").innerText`)
	if !strings.HasPrefix(prompt, "Question: "+testfiles.Facts(t).FirstQuestion) || !strings.HasSuffix(strings.TrimSpace(prompt), "Answer:") {
		t.Errorf("prompt preview %q: want the gsm8k template around problem 1", brief(prompt))
	}
	b.do(t, "test the base model's connection", chromedp.Click(chromedp.CSS("button[hx-post$='/test']")))
	reply := b.waitFor(t, "the connection test's answer", `(document.querySelector(".test-result") || {}).innerText || ""`, 15*time.Second)
	if !strings.Contains(reply, "OK") {
		t.Errorf("test connection: %q", reply)
	}

	b.do(t, "start sampling", chromedp.Click(chromedp.CSS("#start-sampling")))
	// Watch the live bars: they pass through the middle on their way.
	var seen []string
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(() => {
			if (document.getElementById("headline")) return "report";
			return [...document.querySelectorAll("#sampling-progress .sample-percent")].map(e => e.innerText).join(",");
		})()`))
		if err == nil {
			if v == "report" {
				break
			}
			if v != "" && (len(seen) == 0 || seen[len(seen)-1] != v) {
				seen = append(seen, v)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	a.waitReady(t, id, 30*time.Second)
	midway := false
	for _, v := range seen {
		for _, p := range strings.Split(v, ",") {
			if p != "0%" && p != "100%" {
				midway = true
			}
		}
	}
	if !midway {
		t.Errorf("never saw a sampling bar between 0%% and 100%%: %v", seen)
	}
	b.waitFor(t, "the report", `document.getElementById("headline") ? "yes" : ""`, 15*time.Second)
	b.open(t, fmt.Sprintf("%s/comparisons/%d/progress", a.url, id))
	final := eval[string](t, b, `[...document.querySelectorAll("#sampling-progress .sample-percent")].map(e => e.innerText).join(",")`)
	if final != "100%,100%" {
		t.Errorf("final sampling bars %q; want 100%%,100%%", final)
	}
	rep, err := analysis.Build(context.Background(), a.st, id)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Problems != 30 || rep.KMax != 8 {
		t.Errorf("report: %d problems, k max %d; want 30, 8", rep.Problems, rep.KMax)
	}
	// Extend n from the report: only the missing samples are drawn.
	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
	b.do(t, "extend to n = 12",
		chromedp.SetValue(chromedp.CSS("form.extend input[name=n]"), "12"),
		chromedp.Click(chromedp.CSS("form.extend button")))
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := a.st.GetComparison(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if cfg, err := jobs.ParseSamplingConfig(c.Sampling); err == nil && cfg.N == 12 {
			break // the form was taken: sampling to n = 12 has started
		}
		if time.Now().After(deadline) {
			t.Fatalf("extending to n = 12 did not start\n%s", b.describe())
		}
	}
	a.waitReady(t, id, time.Minute)
	if rep, err = analysis.Build(context.Background(), a.st, id); err != nil {
		t.Fatal(err)
	}
	if rep.KMax != 12 {
		t.Errorf("k max %d after extending to n = 12", rep.KMax)
	}
	t.Logf("sampling bars seen: %v", seen)
	b.checkConsole(t)
}

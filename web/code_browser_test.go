package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/internal/verify"
	"github.com/reach-lab/reach/internal/verify/code"
	vmath "github.com/reach-lab/reach/internal/verify/math"
	"github.com/reach-lab/reach/web"
)

// startCodeApp is Reach with code grading: the verifier dispatches code
// problems to the sandbox, as `reach serve` builds it.
func startCodeApp(t *testing.T) *app {
	t.Helper()
	sb := code.NewSandbox(context.Background(), code.Config{})
	if err := sb.Err(); err != nil {
		t.Fatalf("code sandbox: %v (install bubblewrap)", err)
	}
	v := verify.Dispatch{Math: vmath.New(), Code: code.New(sb)}
	st, _ := testdb.New(t)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	client, err := jobs.NewClient(st, jobs.Config{Workers: 4, Verifier: v, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
	srv := httptest.NewServer(web.New(st, client, web.Config{Verifier: v, CodeGrading: sb.Err()}, logger))
	t.Cleanup(srv.Close)
	return &app{st: st, client: client, url: srv.URL}
}

func examplesFile(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "internal", "examples", "data", name)
}

// firstTasks writes the samples of the first n tasks of a shipped
// human-eval results file (with its labels) to dir.
func firstTasks(t *testing.T, dir, name string, n int) string {
	t.Helper()
	in, err := os.Open(examplesFile(name))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(dir, strings.TrimSuffix(name, ".jsonl")+"_samples.jsonl_results.jsonl")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var row struct {
			TaskID string `json:"task_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if !seen[row.TaskID] && len(seen) == n {
			break
		}
		seen[row.TaskID] = true
		fmt.Fprintln(out, sc.Text())
	}
	return path
}

// TestBrowserReverifyCode: on a HumanEval comparison with human-eval's
// labels, an editor re-verifies (Reach runs every completion in its
// sandbox), the page says how many of Reach's verdicts differ from the
// file's, and a problem page shows a failing sample's failing test and
// output.
func TestBrowserReverifyCode(t *testing.T) {
	a := startCodeApp(t)
	dir := t.TempDir()
	ctx := context.Background()
	id, _, err := intake.Create(ctx, a.st, a.client, intake.Spec{Name: "HumanEval pair (first tasks)",
		Dataset: intake.LocalFile(examplesFile("humaneval.jsonl")),
		Models: []intake.Model{
			{Name: "Mistral", File: intake.LocalFile(firstTasks(t, dir, "mistral-7b-instruct.jsonl", 3)), CodeHarness: code.HarnessStripDocstrings},
			{Name: "Zephyr", File: intake.LocalFile(firstTasks(t, dir, "zephyr-7b-alpha.jsonl", 3)), CodeHarness: code.HarnessStripDocstrings},
		}})
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t, id, 2*time.Minute)

	b := newBrowser(t, 5*time.Minute)
	b.signIn(t, a)
	base := fmt.Sprintf("%s/comparisons/%d", a.url, id)
	b.open(t, base)
	note := eval[string](t, b, `document.querySelector("#code-grading") ? document.querySelector("#code-grading").innerText : ""`)
	if !strings.Contains(note, "164 code problems") || !strings.Contains(note, "Mistral strip-docstrings · Zephyr strip-docstrings") {
		t.Errorf("code grading note %q", note)
	}
	b.clickAndWait(t, "#reverify-button", regexp.MustCompile(`/reverify$`))
	b.clickAndWait(t, "#confirm-reverify", regexp.MustCompile(fmt.Sprintf(`^/comparisons/%d$`, id)))
	// While it runs the page says what is happening (it said "Importing and verifying").
	if lead := eval[string](t, b, `(document.querySelector("p.lead") || {}).innerText || ""`); strings.Contains(lead, "Importing") {
		t.Errorf("progress page during re-verification: %q", lead)
	}

	// Re-verification runs on the workers; the page, reloaded, says how
	// many of Reach's verdicts differ from the file's labels.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		c, err := a.st.GetComparison(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		done := c.Status == store.StatusReady
		for _, r := range c.Runs {
			done = done && r.VerdictsChanged != nil
		}
		if done {
			break
		}
		if c.Status == store.StatusFailed || time.Now().After(deadline) {
			t.Fatalf("re-verification: comparison %s %q", c.Status, c.Error)
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.open(t, base)
	changed := b.waitFor(t, "the count of changed verdicts", `Array.from(document.querySelectorAll(".verdicts-changed")).map(e => e.innerText).join(" | ")`, 30*time.Second)
	if strings.Count(changed, "0 differ from the file's labels") != 2 {
		t.Errorf("verdicts changed: %q (the harness that made the labels gives the same verdicts)", changed)
	}

	// A failing sample of the first problem shows its failing test and
	// the output, escaped as text.
	c, _ := a.st.GetComparison(ctx, id)
	ps, err := a.st.Problems(ctx, *c.DatasetID, false)
	if err != nil {
		t.Fatal(err)
	}
	var pid int64
	var want store.Sample
	for _, p := range ps[:3] {
		samples, err := a.st.SamplesForProblem(ctx, c.Runs[0].ID, p.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range samples {
			if s.Status == store.SampleIncorrect && s.Detail != "" && s.VerdictSource == code.Name {
				pid, want = p.ID, s
				break
			}
		}
		if pid != 0 {
			break
		}
	}
	if pid == 0 {
		t.Fatal("no failing sample graded by the code verifier among the first problems")
	}
	b.open(t, fmt.Sprintf("%s/problems/%d", base, pid))
	sel := fmt.Sprintf("#sample-%d-%d", want.RunID, want.SampleIndex)
	b.do(t, "open the failing sample", chromedp.Click(chromedp.CSS(sel+" > summary")))
	reason := eval[string](t, b, fmt.Sprintf(`document.querySelector(%q + " .reason").innerText`, sel))
	detail := eval[string](t, b, fmt.Sprintf(`document.querySelector(%q + " pre.detail").textContent`, sel))
	label := eval[string](t, b, fmt.Sprintf(`document.querySelector(%q + " .verdict").innerText`, sel))
	if label != "incorrect" || reason != want.Reason || !strings.Contains(detail, "Traceback") && !strings.Contains(detail, "Error") {
		t.Errorf("failing sample on the page: %q, reason %q, detail %q; stored reason %q", label, reason, detail, want.Reason)
	}
	if want.Detail != detail {
		t.Errorf("the page's detail is not the stored text:\n%q\n%q", detail, want.Detail)
	}
	if tags := eval[int](t, b, fmt.Sprintf(`document.querySelectorAll(%q + " pre.detail *").length`, sel)); tags != 0 {
		t.Errorf("the detail holds %d HTML elements: model output must be text", tags)
	}
	// A program has no final answer: no answer table (it put every program
	// in one "no answer" row marked correct) and no "no answer" tags.
	if got := eval[[]int](t, b, `[document.querySelectorAll("#answers").length, document.querySelectorAll(".no-answer").length]`); got[0] != 0 || got[1] != 0 {
		t.Errorf("code problem page: %d answer tables, %d \"no answer\" tags; want none", got[0], got[1])
	}
	b.open(t, base)
	if q := eval[string](t, b, `Array.from(document.querySelectorAll("#headline td.quality")).map(e => e.innerText).join(" | ")`); strings.Contains(q, "no answer") || !strings.Contains(q, "without code to run") {
		t.Errorf("code comparison's verdict notes %q: want \"without code to run\", not \"no answer\"", q)
	}
	b.checkConsole(t)
}

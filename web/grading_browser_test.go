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

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/intake"
)

// TestBrowserGradingActions (issue 9, cases 1 and 4): re-verification asks
// first, is audited, and the file's verdicts come back with one click; the
// grading policy switch changes the figures on the page.
//
// Two problems (105 and 7). The base file labels "\boxed{104}" correct, so
// by its labels base pass@1 is 3/4 = 75 %; Reach's verifier says 2/4 = 50 %.
// The RL file has a completion cut by the length limit that ends on an
// unmarked "= 7": strict grading (the default) counts it wrong (pass@1
// 3/4 = 75 %), lenient takes the last number (4/4 = 100 %).
func TestBrowserGradingActions(t *testing.T) {
	a := startApp(t)
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ds := write("dataset.jsonl", `{"id": "t1", "problem": "Seven groups of six shake hands within the group. How many handshakes?", "answer": "105"}
{"id": "t2", "problem": "x + 3 = 10. What is x?", "answer": "7"}
`)
	base := write("base.jsonl", `{"problem_id": "t1", "sample_index": 0, "completion": "So \\boxed{104}.", "correct": true}
{"problem_id": "t1", "sample_index": 1, "completion": "So \\boxed{105}.", "correct": true}
{"problem_id": "t2", "sample_index": 0, "completion": "So \\boxed{7}.", "correct": true}
{"problem_id": "t2", "sample_index": 1, "completion": "So \\boxed{8}.", "correct": false}
`)
	rl := write("rl.jsonl", `{"problem_id": "t1", "sample_index": 0, "completion": "\\boxed{105}", "finish_reason": "stop"}
{"problem_id": "t1", "sample_index": 1, "completion": "\\boxed{105}", "finish_reason": "stop"}
{"problem_id": "t2", "sample_index": 0, "completion": "\\boxed{7}", "finish_reason": "stop"}
{"problem_id": "t2", "sample_index": 1, "completion": "Subtracting 3 from both sides, x = 7", "finish_reason": "length"}
`)
	id, _, err := intake.Create(ctx, a.st, a.client, intake.Spec{Name: "grading actions", Dataset: intake.LocalFile(ds),
		Models: []intake.Model{{Name: "Base", File: intake.LocalFile(base)}, {Name: "RL", File: intake.LocalFile(rl)}}})
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t, id, 2*time.Minute)

	b := newBrowser(t, 5*time.Minute)
	b.signIn(t, a)
	page := fmt.Sprintf("%s/comparisons/%d", a.url, id)
	pass1 := func(model string) string {
		t.Helper()
		return eval[string](t, b, fmt.Sprintf(`(() => {
			for (const tr of document.querySelectorAll("#headline tbody tr")) {
				if (tr.cells[0].innerText.trim().startsWith(%q)) return tr.cells[1].innerText.trim();
			}
			return "";
		})()`, model))
	}
	expect := func(when, model, want string) {
		t.Helper()
		if got := pass1(model); !strings.HasPrefix(got, want) {
			t.Errorf("%s: %s pass@1 %q; want %s", when, model, got, want)
		}
	}
	b.open(t, page)
	expect("file's verdicts", "Base", "75.00")
	expect("strict", "RL", "75.00")
	if got := eval[string](t, b, `document.querySelector("#grading-policy-name").innerText`); got != "strict" {
		t.Errorf("policy shown %q; want strict", got)
	}

	// Case 4: the policy switch re-grades without re-importing.
	clickAndReload(t, b, "#switch-policy")
	a.waitReady(t, id, 2*time.Minute)
	b.open(t, page)
	if got := eval[string](t, b, `document.querySelector("#grading-policy-name").innerText`); got != "lenient" {
		t.Errorf("policy shown %q after the switch; want lenient", got)
	}
	expect("lenient", "RL", "100.00")
	expect("lenient", "Base", "75.00")

	// Case 1: re-verification asks first and says what it will do.
	b.clickAndWait(t, "#reverify-button", regexp.MustCompile(`/reverify$`))
	if txt := eval[string](t, b, `document.querySelector("#confirm-reverify").innerText`); !strings.Contains(txt, "8 samples") {
		t.Errorf("confirm button %q; want it to name the 8 samples", txt)
	}
	b.clickAndWait(t, "#confirm-reverify", regexp.MustCompile(fmt.Sprintf(`^/comparisons/%d$`, id)))
	a.waitReady(t, id, 2*time.Minute)
	b.open(t, page)
	b.waitFor(t, "re-verified figures", `(() => { const c = document.querySelector("#headline tbody tr").cells[1].innerText; return c.startsWith("50.00") ? c : ""; })()`, time.Minute)
	if n := eval[int](t, b, `document.querySelectorAll("#restore-verdicts").length`); n != 1 {
		t.Fatalf("%d restore buttons after re-verification; want 1", n)
	}

	// One click brings the file's verdicts back.
	clickAndReload(t, b, "#restore-verdicts")
	a.waitReady(t, id, 2*time.Minute)
	b.open(t, page)
	b.waitFor(t, "the file's figures again", `(() => { const c = document.querySelector("#headline tbody tr").cells[1].innerText; return c.startsWith("75.00") ? c : ""; })()`, time.Minute)
	if n := eval[int](t, b, `document.querySelectorAll("#restore-verdicts").length`); n != 0 {
		t.Errorf("%d restore buttons after restoring; want 0", n)
	}

	// Every action is in the audit log.
	b.open(t, page+"/audit")
	audit := eval[string](t, b, `document.body.innerText`)
	for _, action := range []string{"grading-policy", "reverify", "restore"} {
		if !strings.Contains(audit, action) {
			t.Errorf("audit page does not record %q:\n%s", action, brief(audit))
		}
	}

	// An owner deletes the comparison from its page, after a confirmation
	// that says what goes.
	b.open(t, page)
	b.clickAndWait(t, "#delete-button", regexp.MustCompile(`/delete$`))
	if txt := eval[string](t, b, `document.querySelector("main").innerText`); !strings.Contains(txt, "8 stored samples") {
		t.Errorf("delete confirmation %q does not say what goes", brief(txt))
	}
	b.clickAndWait(t, "#confirm-delete", regexp.MustCompile(`^/$`))
	if _, err := a.st.GetComparison(ctx, id); err == nil {
		t.Error("the comparison is still there after Delete")
	}
	b.checkConsole(t)
}

// clickAndReload clicks a form button whose answer redirects back to the
// page it is on, and waits for the new document (the URL alone cannot
// tell the two apart).
func clickAndReload(t *testing.T, b *browser, sel string) {
	t.Helper()
	eval[bool](t, b, `(window.__beforeClick = true)`)
	b.do(t, "click "+sel, chromedp.Click(chromedp.CSS(sel)))
	b.waitFor(t, "the page after "+sel, `(document.readyState === "complete" && !window.__beforeClick) ? location.pathname : ""`, 30*time.Second)
}

package web_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/sampling"
)

// The admin pages of issue 10 and the cut completion, in Chromium: an admin
// allows a user to create projects and sets the endpoint networks (a bad
// line is refused naming it); a long completion shows cut with a link that
// opens the whole text as plain text.
func TestBrowserHardeningPages(t *testing.T) {
	a := startApp(t)
	t.Cleanup(func() { sampling.SetNetPolicy(sampling.DefaultNetPolicy()) })
	b := newBrowser(t, 2*time.Minute)
	b.signIn(t, a, "admin@reach.test")
	u := createUser(t, a.st, "analyst@reach.test", false, "")

	b.open(t, a.url+"/admin/users")
	row := fmt.Sprintf(`form[action="/admin/users/%d/project-creator"]`, u.ID)
	b.do(t, "allow project creation", chromedp.Click(chromedp.CSS(row+" button")))
	b.waitFor(t, "the grant shown", fmt.Sprintf(`(() => { const f = document.querySelector(%q); return document.readyState === "complete" && f && f.textContent.includes("yes") ? "ok" : ""; })()`, row), 10*time.Second)
	if got, _ := a.st.UserByEmail(context.Background(), u.Email); !got.CanCreateProjects {
		t.Error("the Allow button did not grant project creation")
	}

	b.clickAndWait(t, `a[href="/admin/network"]`, regexp.MustCompile(`^/admin/network$`))
	setPolicy := func(text string) {
		t.Helper()
		b.do(t, "write the policy", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector("#network-form textarea").value = %q`, text)),
			chromedp.Click(chromedp.CSS(`#network-form button[type=submit]`)))
	}
	setPolicy("deny 169.254.0.0/16\nallow the GPU box")
	msg := b.waitFor(t, "the refusal", `(() => { const e = document.querySelector("p.error"); return e ? e.textContent : ""; })()`, 10*time.Second)
	if !strings.Contains(msg, "line 2") {
		t.Errorf("bad policy: %q, want the line named", msg)
	}
	setPolicy("deny 169.254.0.0/16\ndeny 10.0.0.0/8 # not the cluster")
	b.waitFor(t, "saved", `document.querySelector("#network-saved") ? "ok" : ""`, 10*time.Second)
	if s := sampling.CurrentNetPolicy(); len(s.Rules) != 2 || s.Rules[1].Text != "deny 10.0.0.0/8" {
		t.Errorf("policy in force: %+v", s.Rules)
	}

	id := teamPair(t, a, "long pair", "base", "rl", []string{"The answer is 2.", "I think 3.", "Maybe 5.", "Surely 7."})
	whole := strings.Repeat("Let me check once more. ", 20_000) + "The answer is 2."
	if _, err := a.st.Pool().Exec(context.Background(), `UPDATE samples SET completion = $1 WHERE sample_index = 0
		AND run_id IN (SELECT id FROM runs WHERE comparison_id = $2)`, whole, id); err != nil {
		t.Fatal(err)
	}
	b.open(t, fmt.Sprintf("%s/comparisons/%d?region=base-only#problems", a.url, id))
	b.waitReport(t)
	b.clickAndWait(t, `#problem-table tr[data-key="t1"] a`, problemPath)
	shown := eval[int](t, b, `document.querySelector("details.sample pre.completion").textContent.length`)
	if shown > 70_000 {
		t.Errorf("the page holds %d characters of a %d-character completion", shown, len(whole))
	}
	b.do(t, "open the whole text", chromedp.Evaluate[chromedp.Void](`document.querySelector(".cut-completion a").click()`))
	got := b.waitFor(t, "the whole text", `document.readyState === "complete" && document.contentType === "text/plain" ? String(document.body.innerText.length) : ""`, 20*time.Second)
	if got != fmt.Sprint(len(whole)) {
		t.Errorf("the whole text has %s characters, want %d", got, len(whole))
	}
	// The refused policy answered 400 (Chromium logs that); nothing else.
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.msgs {
		if (m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException) && !strings.HasSuffix(m.URL, "/favicon.ico") &&
			!(strings.HasSuffix(m.URL, "/admin/network") && strings.Contains(m.Text, "400")) {
			t.Errorf("browser console %s at %s: %s", m.Type, m.URL, m.Text)
		}
	}
}

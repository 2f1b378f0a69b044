package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/web"
)

// In the browser: an admin allows a folder, an editor has the comparison
// follow a folder inside it, a step file written there shows up as a
// checkpoint with the following line counting it, and Stop ends it.
func TestBrowserFollowServerFolder(t *testing.T) {
	tools := filepath.Join("..", "internal", "ingest", "testdata", "tools")
	a := startAppWith(t, web.Config{FollowEvery: 300 * time.Millisecond})
	b := newBrowser(t, 120*time.Second)
	b.signIn(t, a)
	id, _, err := intake.Create(context.Background(), a.st, a.client, intake.Spec{Name: "followed in the browser",
		Dataset: intake.LocalFile(filepath.Join(tools, "dataset_words.jsonl")),
		Models: []intake.Model{{Name: "base", Role: "base", File: intake.LocalFile(filepath.Join(tools, "vllm_outputs.jsonl"))},
			{Name: "sft", File: intake.LocalFile(filepath.Join(tools, "trl_completions_00040.jsonl"))}}})
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t, id, time.Minute)
	root := t.TempDir()
	run := filepath.Join(root, "ppo", "val")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}

	b.open(t, a.url+"/admin/folders")
	b.do(t, "list the folder", chromedp.SetValue(chromedp.CSS(`#folders-form textarea`), root), chromedp.Click(chromedp.CSS(`#folders-form button`)))
	b.waitFor(t, "saved", `document.querySelector("#folders-saved") ? "ok" : ""`, 10*time.Second)

	page := fmt.Sprintf("%s/comparisons/%d", a.url, id)
	b.open(t, page)
	b.waitReport(t)
	b.do(t, "open the follow form", chromedp.Click(chromedp.CSS(`#follow-link a`)))
	b.waitFor(t, "the follow form", `document.querySelector("#follow-form") ? "ok" : ""`, 10*time.Second)
	b.screenshotOf(t, "body", "follow-form")
	b.do(t, "follow the folder", chromedp.SetValue(chromedp.CSS(`#follow-form input[name=model]`), "ppo"),
		chromedp.SetValue(chromedp.CSS(`#follow-form input[name=path]`), run), chromedp.Click(chromedp.CSS(`#follow-form button`)))
	status := b.waitFor(t, "following", `(document.querySelector("#follow-status") || {}).textContent || ""`, 10*time.Second)
	if !strings.Contains(status, "following") || !strings.Contains(status, "0 steps in") {
		t.Errorf("following line %q", status)
	}

	if err := os.WriteFile(filepath.Join(run, "100.jsonl"), stepFile(t, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		b.open(t, page)
		text := eval[string](t, b, `(document.querySelector("#follow-status") || {}).textContent || ""`)
		if strings.Contains(text, "1 step in") && eval[bool](t, b, `document.body.textContent.includes("ppo step 100")`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint after a minute: %q", text)
		}
		time.Sleep(300 * time.Millisecond)
	}
	b.waitReport(t)
	b.screenshotOf(t, "#follow-status", "following")
	b.do(t, "stop", chromedp.Click(chromedp.CSS(`#follow-stop`)))
	status = b.waitFor(t, "stopped", `document.readyState === "complete" && document.querySelector("#follow-status") && document.querySelector("#follow-status").textContent.includes("Followed") ? document.querySelector("#follow-status").textContent : ""`, 15*time.Second)
	if !strings.Contains(status, "1 step in") {
		t.Errorf("after Stop: %q", status)
	}
}

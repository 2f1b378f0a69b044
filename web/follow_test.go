package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web"
)

// stepFile is the lines of verl_val_steps.jsonl (verl's dump of steps 100,
// 200 and 300) of one step: the {step}.jsonl verl writes at that step.
func stepFile(t *testing.T, step int) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "internal", "ingest", "testdata", "tools", "verl_val_steps.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if strings.Contains(l, fmt.Sprintf(`"step": %d,`, step)) {
			b.WriteString(l)
		}
	}
	return []byte(b.String())
}

// A comparison follows a server folder an admin allows: a path outside the
// allowed folders and a link leading out of them are refused naming them;
// a step file copied into the followed folder later becomes a checkpoint
// within a minute, with the pass@1 its records give; Stop keeps everything
// and adds nothing more.
func TestFollowServerFolder(t *testing.T) {
	tools := filepath.Join("..", "internal", "ingest", "testdata", "tools")
	a := startAppWith(t, web.Config{FollowEvery: 300 * time.Millisecond})
	admin := newAccount(t, a.st, a.url, "admin@lab.org", true, "owner")
	editor := newAccount(t, a.st, a.url, "trainer@lab.org", false, "editor")
	id := upload(t, a, editor, "followed", filepath.Join(tools, "dataset_words.jsonl"), [][3]string{
		{"base", "base", filepath.Join(tools, "vllm_outputs.jsonl")}, {"rl", "sft", filepath.Join(tools, "trl_completions_00040.jsonl")}})
	a.waitReady(t, id, time.Minute)

	base := t.TempDir()
	root, outside, run := filepath.Join(base, "runs"), filepath.Join(base, "home"), filepath.Join(base, "runs", "ppo", "val")
	for _, d := range []string{run, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "home")); err != nil {
		t.Fatal(err)
	}
	followURL := fmt.Sprintf("%s/comparisons/%d/follow", a.url, id)
	start := func(path string) (int, string) {
		code, _, body := post(t, followURL, editor.Cookie.String(), "application/x-www-form-urlencoded",
			[]byte(url.Values{"model": {"ppo"}, "path": {path}}.Encode()))
		return code, body
	}
	// Off until an admin lists a folder.
	if code, body := start(run); code != 400 || !strings.Contains(body, "following a server folder is off") {
		t.Errorf("no folders allowed: HTTP %d\n%.2000s", code, body)
	}
	code, _, body := post(t, a.url+"/admin/folders", admin.Cookie.String(), "application/x-www-form-urlencoded", []byte(url.Values{"roots": {root}}.Encode()))
	if code != 200 || !strings.Contains(body, "Saved.") {
		t.Fatalf("set the folders: HTTP %d\n%.2000s", code, body)
	}
	realRoot, _ := filepath.EvalSymlinks(root)
	for _, p := range []string{outside, filepath.Join(root, "home"), root + "/ppo/../../home"} {
		if code, body := start(p); code != 400 || !strings.Contains(body, realRoot) || !strings.Contains(body, "Not followed") {
			t.Errorf("%s: HTTP %d; want 400 naming the allowed folder\n%.3000s", p, code, body)
		}
	}
	if code, body := start(run); code != 303 {
		t.Fatalf("follow %s: HTTP %d\n%.2000s", run, code, body)
	}
	if code, _ := start(run); code != 400 {
		t.Errorf("a second folder for the same comparison: HTTP %d; want 400", code)
	}

	waitStep := func(step int) store.Run {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			c, err := a.st.GetComparison(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range c.Runs {
				if r.ModelName == fmt.Sprintf("ppo step %d", step) && c.Status == store.StatusReady {
					return r
				}
			}
			if c.Status == store.StatusFailed {
				t.Fatalf("comparison failed: %s", c.Error)
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("step %d not in after a minute", step)
		return store.Run{}
	}
	// The trainer writes step 100 after the follow started.
	time.Sleep(500 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(run, "100.jsonl"), stepFile(t, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	r := waitStep(100)
	if r.Step == nil || *r.Step != 100 || r.Role != "checkpoint" {
		t.Errorf("run %+v; want checkpoint at step 100", r)
	}
	if err := os.WriteFile(filepath.Join(run, "200.jsonl"), stepFile(t, 200), 0o644); err != nil {
		t.Fatal(err)
	}
	waitStep(200)
	rep, err := analysis.Build(context.Background(), a.st, id)
	if err != nil {
		t.Fatal(err)
	}
	// Step 100: correct 1, 0, 2, 0 of 2 per problem; step 200: 2, 1, 1, 0.
	want := map[string]float64{"ppo step 100": 0.375, "ppo step 200": 0.5}
	for _, m := range rep.Models {
		if w, ok := want[m.Name]; ok && math.Abs(m.Pass1-w) > 1e-12 {
			t.Errorf("%s pass@1 %.4f; the file gives %.4f", m.Name, m.Pass1, w)
		}
	}
	page := getPage(t, a, editor, fmt.Sprintf("/comparisons/%d", id))
	realRun, _ := filepath.EvalSymlinks(run)
	if !strings.Contains(page, "following <code>"+realRun+"</code>: last looked at") || !strings.Contains(page, "2 steps in") || !strings.Contains(page, `id="follow-stop"`) {
		t.Errorf("the page does not say what it follows:\n%.200s", page[strings.Index(page, "follow")-100:])
	}

	// A step file cut short (the trainer died mid-write) is refused as the
	// follow's last error; the comparison keeps everything.
	whole := stepFile(t, 300)
	if err := os.WriteFile(filepath.Join(run, "150.jsonl"), whole[:len(whole)-40], 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		f, err := a.st.LatestFollow(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(f.LastError, "step 150 not added: 150.jsonl:8") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a step file cut short: last error %q", f.LastError)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if c, err := a.st.GetComparison(context.Background(), id); err != nil || c.Status != store.StatusReady || len(c.Runs) != 4 {
		t.Errorf("after a step file cut short: %s, %d models (%v)", c.Status, len(c.Runs), err)
	}
	if page := getPage(t, a, editor, fmt.Sprintf("/comparisons/%d", id)); !strings.Contains(page, "step 150 not added") ||
		!strings.Contains(page, "step 150: failed, not shown (150.jsonl:8") {
		t.Errorf("the page does not show the refused step on the follow's line and the trajectory")
	}
	var rj struct {
		FailedSteps []store.FailedStep `json:"failed_steps"`
	}
	body = getPage(t, a, editor, fmt.Sprintf("/api/v1/comparisons/%d/report", id))
	if err := json.Unmarshal([]byte(body), &rj); err != nil || len(rj.FailedSteps) != 1 || rj.FailedSteps[0].Step != 150 || rj.FailedSteps[0].File != "150.jsonl" ||
		!strings.HasPrefix(rj.FailedSteps[0].Error, "150.jsonl:8") {
		t.Errorf("the report JSON's failed steps %+v (%v); want step 150 with its file's error\n%.300s", rj.FailedSteps, err, body)
	}

	// A step file that is a link leading out of the allowed folder is not read
	// (only regular files are step files; a link is checked besides).
	if err := os.WriteFile(filepath.Join(outside, "notes.jsonl"), stepFile(t, 300), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "notes.jsonl"), filepath.Join(run, "250.jsonl")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // several looks
	if c, err := a.st.GetComparison(context.Background(), id); err != nil || len(c.Runs) != 4 {
		t.Errorf("a step file linked from outside was read: %d models (%v)", len(c.Runs), err)
	}

	// Stop: every checkpoint stays, a later step file is not read.
	code, _, _ = post(t, followURL+"/stop", editor.Cookie.String(), "application/x-www-form-urlencoded", nil)
	if code != 303 {
		t.Errorf("stop: HTTP %d", code)
	}
	if err := os.WriteFile(filepath.Join(run, "300.jsonl"), stepFile(t, 300), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	c, err := a.st.GetComparison(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range c.Runs {
		names = append(names, r.ModelName)
	}
	if got := strings.Join(names, ", "); got != "base, sft, ppo step 100, ppo step 200" {
		t.Errorf("models after Stop: %s", got)
	}
	if page := getPage(t, a, editor, fmt.Sprintf("/comparisons/%d", id)); !strings.Contains(page, "Followed <code>"+realRun+"</code> until") {
		t.Errorf("the page does not say the following stopped")
	}
	if page := getPage(t, a, editor, fmt.Sprintf("/comparisons/%d/follow", id)); strings.Contains(page, "@Name") || !strings.Contains(page, `id="follow-form"`) {
		t.Errorf("the follow page after Stop: a component printed as text, or no form to follow again:\n%.3000s", page)
	}
}

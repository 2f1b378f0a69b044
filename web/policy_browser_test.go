package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/intake"
)

// modelCount is what a problem page shows for one model: the count line
// (c of n, and the "+ u correct …, not counted" part) and its samples'
// badges.
type modelCount struct {
	Model     string   `json:"model"`
	Line      string   `json:"line"`      // ".cn", "c/n correct"
	Uncounted string   `json:"uncounted"` // ".cn-uncounted", "" when absent
	Badges    []string `json:"badges"`
	Titles    []string `json:"titles"`
	Counted   []string `json:"counted"` // data-counted per sample
}

// readCounts reads every model's count line and badges on the open problem page.
func readCounts(t *testing.T, b *browser) []modelCount {
	t.Helper()
	raw := eval[string](t, b, `JSON.stringify(Array.from(document.querySelectorAll(".model-samples")).map(m => ({
		model: m.querySelector("h2").firstChild.textContent.trim(),
		line: m.querySelector("h2 .cn").textContent.trim(),
		uncounted: (m.querySelector("h2 .cn-uncounted") || {textContent: ""}).textContent.trim(),
		badges: Array.from(m.querySelectorAll("details.sample > summary .verdict")).map(e => e.textContent.trim()),
		titles: Array.from(m.querySelectorAll("details.sample > summary .verdict")).map(e => e.title),
		counted: Array.from(m.querySelectorAll("details.sample")).map(d => d.dataset.counted),
	})))`)
	var out []modelCount
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// agree checks that a model's count line adds up with its badges: c is the
// number of samples badged plain "correct" (each marked counted), the
// "+ u correct" part the number badged "not counted under policy" (each
// with a title saying how to switch), and every sample is shown.
func (m modelCount) agree(t *testing.T, when, policy string) (c, u int) {
	t.Helper()
	var n int
	if _, err := fmt.Sscanf(m.Line, "%d/%d correct", &c, &n); err != nil {
		t.Fatalf("%s: %s count line %q: %v", when, m.Model, m.Line, err)
	}
	if m.Uncounted != "" {
		if _, err := fmt.Sscanf(m.Uncounted, "+ %d correct", &u); err != nil {
			t.Fatalf("%s: %s uncounted line %q: %v", when, m.Model, m.Uncounted, err)
		}
		if !strings.HasSuffix(m.Uncounted, "not counted under "+policy) {
			t.Errorf("%s: %s uncounted line %q; want it to end \"not counted under %s\"", when, m.Model, m.Uncounted, policy)
		}
	}
	plain, uncounted := 0, 0
	for i, badge := range m.Badges {
		switch {
		case badge == "correct":
			plain++
			if m.Counted[i] != "true" {
				t.Errorf("%s: %s sample %d badged correct but data-counted %q", when, m.Model, i, m.Counted[i])
			}
		case strings.HasPrefix(badge, "correct") && strings.HasSuffix(badge, "not counted under "+policy):
			uncounted++
			if m.Counted[i] != "false" || !strings.Contains(m.Titles[i], "lenient") {
				t.Errorf("%s: %s sample %d badge %q: data-counted %q, title %q; want false and a title naming lenient", when, m.Model, i, badge, m.Counted[i], m.Titles[i])
			}
		case strings.HasPrefix(badge, "correct"):
			t.Errorf("%s: %s sample %d badge %q", when, m.Model, i, badge)
		}
	}
	if len(m.Badges) != n || plain != c || uncounted != u {
		t.Errorf("%s: %s shows %q %q over %d samples badged %q; want the count to equal the plain correct badges and the uncounted part the rest",
			when, m.Model, m.Line, m.Uncounted, len(m.Badges), m.Badges)
	}
	return c, u
}

// TestBrowserPolicyBadgesMatchCounts (grading policy shown = counted, parts
// 1 and 3): on a problem page, each model's count line equals its samples'
// badges under strict and under lenient; a sample Reach graded correct by
// the last-number fallback, or cut off by the length limit, is badged "not
// counted under strict" with a title saying how to switch. The policy line
// under the headline says what the policy applies to, and on a comparison
// whose verdicts all come from its files it says the policy has no effect
// and offers no switch.
//
// Base carries its file's verdicts. RL is graded by Reach: on t1 four
// last-number answers (strict 0/4 + 4 not counted, lenient 4/4); on t2 a
// \boxed{7}, a \boxed{7} cut by the length limit, a wrong \boxed{8} and a
// cut "x = 7" (strict 1/4 + 2 not counted, lenient 3/4).
func TestBrowserPolicyBadgesMatchCounts(t *testing.T) {
	a := startApp(t)
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, body string) intake.File {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return intake.LocalFile(p)
	}
	ds := `{"id": "t1", "problem": "Seven groups of six shake hands within the group. How many handshakes?", "answer": "105"}
{"id": "t2", "problem": "x + 3 = 10. What is x?", "answer": "7"}
`
	base := `{"problem_id": "t1", "sample_index": 0, "completion": "Each group has 15 handshakes, so 7 * 15 = 105", "correct": true}
{"problem_id": "t1", "sample_index": 1, "completion": "Seven groups: 7 * 15 = 105", "correct": true}
{"problem_id": "t1", "sample_index": 2, "completion": "So \\boxed{90}.", "correct": false}
{"problem_id": "t1", "sample_index": 3, "completion": "So \\boxed{105}.", "correct": true}
{"problem_id": "t2", "sample_index": 0, "completion": "So \\boxed{7}.", "correct": true}
{"problem_id": "t2", "sample_index": 1, "completion": "So \\boxed{8}.", "correct": false}
{"problem_id": "t2", "sample_index": 2, "completion": "Subtracting 3, x = 7", "finish_reason": "length", "correct": true}
{"problem_id": "t2", "sample_index": 3, "completion": "So \\boxed{6}.", "correct": false}
`
	rl := `{"problem_id": "t1", "sample_index": 0, "completion": "Each group has 15 handshakes, so 7 * 15 = 105", "finish_reason": "stop"}
{"problem_id": "t1", "sample_index": 1, "completion": "Seven groups of 15: 7 * 15 = 105", "finish_reason": "stop"}
{"problem_id": "t1", "sample_index": 2, "completion": "Handshakes per group 15, groups 7, total 105", "finish_reason": "stop"}
{"problem_id": "t1", "sample_index": 3, "completion": "C(6,2) = 15 per group; 15 * 7 = 105", "finish_reason": "stop"}
{"problem_id": "t2", "sample_index": 0, "completion": "So \\boxed{7}.", "finish_reason": "stop"}
{"problem_id": "t2", "sample_index": 1, "completion": "Subtracting 3 from both sides: \\boxed{7}", "finish_reason": "length"}
{"problem_id": "t2", "sample_index": 2, "completion": "So \\boxed{8}.", "finish_reason": "stop"}
{"problem_id": "t2", "sample_index": 3, "completion": "Subtracting 3 from both sides, x = 7", "finish_reason": "length"}
`
	id, _, err := intake.Create(ctx, a.st, a.client, intake.Spec{Name: "policy badges", Dataset: write("dataset.jsonl", ds),
		Models: []intake.Model{{Name: "Base", File: write("base.jsonl", base)}, {Name: "RL", File: write("rl.jsonl", rl)}}})
	if err != nil {
		t.Fatal(err)
	}
	// Both models with the file's verdicts: the policy changes nothing.
	fileOnly, _, err := intake.Create(ctx, a.st, a.client, intake.Spec{Name: "file verdicts only", Dataset: write("dataset2.jsonl", ds),
		Models: []intake.Model{{Name: "Base", File: write("base2.jsonl", base)}, {Name: "RL", File: write("rl2.jsonl", base)}}})
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t, id, 2*time.Minute)
	a.waitReady(t, fileOnly, 2*time.Minute)
	rep, err := analysis.Build(ctx, a.st, id)
	if err != nil {
		t.Fatal(err)
	}
	pid := map[string]int64{}
	for _, row := range rep.Rows {
		pid[row.Key] = row.ProblemID
	}

	b := newBrowser(t, 5*time.Minute)
	b.signIn(t, a)
	page := fmt.Sprintf("%s/comparisons/%d", a.url, id)
	// check opens each problem page and compares every model's count line
	// and badges with want: model → problem → {c, uncounted}.
	check := func(when, policy string, want map[string]map[string][2]int) {
		t.Helper()
		for _, key := range []string{"t1", "t2"} {
			b.open(t, fmt.Sprintf("%s/problems/%d", page, pid[key]))
			ms := readCounts(t, b)
			if len(ms) != 2 {
				t.Fatalf("%s %s: %d models on the page; want 2", when, key, len(ms))
			}
			for _, m := range ms {
				c, u := m.agree(t, when+" "+key, policy)
				if w := want[m.Model][key]; c != w[0] || u != w[1] {
					t.Errorf("%s %s: %s %d counted + %d not counted; want %d + %d (badges %q)", when, key, m.Model, c, u, w[0], w[1], m.Badges)
				}
			}
		}
	}
	check("strict", "strict", map[string]map[string][2]int{"Base": {"t1": {3, 0}, "t2": {2, 0}}, "RL": {"t1": {0, 4}, "t2": {1, 2}}})

	// The policy line says what strict applies to here, and what it changes.
	b.open(t, page)
	scope := eval[string](t, b, `document.querySelector("#grading-policy-scope").innerText`)
	for _, want := range []string{"Applies to the 8 samples Reach graded", "8 samples keep their file's verdicts", "Strict leaves out 6 samples"} {
		if !strings.Contains(scope, want) {
			t.Errorf("policy line %q; want it to say %q", scope, want)
		}
	}
	clickAndReload(t, b, "#switch-policy")
	a.waitReady(t, id, 2*time.Minute)
	check("lenient", "lenient", map[string]map[string][2]int{"Base": {"t1": {3, 0}, "t2": {2, 0}}, "RL": {"t1": {4, 0}, "t2": {3, 0}}})
	b.open(t, page)
	if scope := eval[string](t, b, `document.querySelector("#grading-policy-scope").innerText`); !strings.Contains(scope, "Lenient counts 6 samples that strict would not") {
		t.Errorf("policy line under lenient %q; want it to say lenient counts 6 samples strict would not", scope)
	}

	// Every verdict from the files: no effect, nothing to switch.
	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, fileOnly))
	if scope := eval[string](t, b, `document.querySelector("#grading-policy-scope").innerText`); scope != "No effect here: every verdict comes from the files." {
		t.Errorf("policy line on a file-verdicts comparison %q; want \"No effect here: every verdict comes from the files.\"", scope)
	}
	if n := eval[int](t, b, `document.querySelectorAll("#switch-policy").length`); n != 0 {
		t.Errorf("%d policy switches on a comparison the policy does not affect; want none", n)
	}
	if txt := eval[string](t, b, `document.querySelector("#grading-policy").innerText`); strings.Contains(txt, "length limit") {
		t.Errorf("policy line on a file-verdicts comparison %q still describes what strict does to Reach's grading", txt)
	}
	b.checkConsole(t)
}

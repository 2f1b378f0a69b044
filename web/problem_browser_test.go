package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/intake"
)

// The problem page shows the base and RL models' samples side by side,
// each box with its verdict and final answer on its first line (also for
// a completion far longer than its box), the answer line marked in the
// text, and the answer distribution: each answer with its count per
// model, the correct one marked; an answer's link shows only its samples.
// Answers are model output and stay text.
func TestBrowserProblemSideBySide(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 90*time.Second)
	b.signIn(t, a)
	line := func(v any) string {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(j) + "\n"
	}
	dataset := line(map[string]string{"id": "q1", "problem": "What is $1+1$?", "answer": "2"}) +
		line(map[string]string{"id": "q2", "problem": "What is $2+2$?", "answer": "4"})
	long := strings.Repeat("We keep adding one and one, carefully.\n", 300) + "So the answer is $\\boxed{2}$."
	base := []string{long, "First $1+1$.\nSo $\\boxed{2}$.\nDone.", "Hmm.\nThus $\\boxed{3}$.", "I give up."}
	rl := []string{"Step one.\nSo the answer is $\\boxed{2}$.\nDone.", "Step one.\nStep two.\nSo the answer is $\\boxed{5}$.\nDone.",
		"$\\boxed{5}$", "Clearly $\\boxed{5}$."}
	hostile := `\boxed{<img src=x onerror="window.__xss=9">}`
	samples := func(texts []string) string {
		var s string
		for j, text := range texts {
			s += line(map[string]any{"problem_id": "q1", "sample_index": j, "completion": text})
			s += line(map[string]any{"problem_id": "q2", "sample_index": j, "completion": map[bool]string{true: hostile, false: "$\\boxed{4}$"}[j == 0]})
		}
		return s
	}
	file := func(n, body string) intake.File {
		return intake.File{Name: n, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }}
	}
	id, _, err := intake.Create(context.Background(), a.st, a.client, intake.Spec{Name: "side by side", Dataset: file("d.jsonl", dataset),
		Models: []intake.Model{{Name: "base", File: file("base.jsonl", samples(base))}, {Name: "rl", File: file("rl.jsonl", samples(rl))}}})
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t, id, 60*time.Second)

	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
	b.waitReport(t)
	b.clickAndWait(t, `#problem-table tr[data-key="q1"] a`, problemPath)
	b.waitFor(t, "KaTeX", `document.querySelector("#statement .katex") ? "yes" : ""`, 10*time.Second)

	// Two columns: same top, base left of RL.
	cols := eval[[][]float64](t, b, `Array.from(document.querySelectorAll(".model-samples")).map(m => { const r = m.getBoundingClientRect(); return [r.top + scrollY, r.left, r.width]; })`)
	if len(cols) != 2 || cols[0][0] != cols[1][0] || cols[0][1]+cols[0][2] > cols[1][1] {
		t.Errorf("model columns (top, left, width) %v, want two side by side", cols)
	}

	// Every box: verdict and final answer on its first line, above the text.
	type head struct {
		Verdict   string  `json:"verdict"`
		Answer    string  `json:"answer"`
		AnswerTop float64 `json:"answerTop"` // from the box's top
		TextTop   float64 `json:"textTop"`   // the completion's top, from the box's top (open boxes)
		Visible   bool    `json:"visible"`   // the answer is in the viewport with the box's top at the viewport's
	}
	heads := eval[[][]head](t, b, `Array.from(document.querySelectorAll(".model-samples")).map(m =>
		Array.from(m.querySelectorAll("details.sample")).map(d => {
			d.scrollIntoView({block: "start"});
			const box = d.getBoundingClientRect();
			const ans = d.querySelector("summary .final-answer").getBoundingClientRect();
			const pre = d.querySelector(".completion-md:not([hidden]), pre.completion:not([hidden])");
			return {
				verdict: d.querySelector("summary .verdict").textContent.trim(),
				answer: d.querySelector("summary .final-answer").textContent.trim(),
				answerTop: ans.top - box.top,
				textTop: d.open ? pre.getBoundingClientRect().top - box.top : -1,
				visible: ans.top >= 0 && ans.bottom <= innerHeight,
			};
		}))`)
	if len(heads) != 2 || len(heads[0]) != 4 || len(heads[1]) != 4 {
		t.Fatalf("sample boxes %v, want 4 per model", heads)
	}
	got := func(m int) []string {
		var out []string
		for _, h := range heads[m] {
			out = append(out, h.Verdict+" "+h.Answer)
		}
		return out
	}
	if want := []string{"correct 2", "correct 2", "incorrect 3", "unparseable no answer"}; !slices.Equal(got(0), want) {
		t.Errorf("base boxes %q, want %q", got(0), want)
	}
	if want := []string{"correct 2", "incorrect 5", "incorrect 5", "incorrect 5"}; !slices.Equal(got(1), want) {
		t.Errorf("rl boxes %q, want %q", got(1), want)
	}
	for m, hs := range heads {
		for i, h := range hs {
			if h.AnswerTop > 40 || !h.Visible || (h.TextTop >= 0 && h.TextTop < h.AnswerTop) {
				t.Errorf("model %d box %d: answer %.0f px below the box's top (visible %v), text at %.0f px", m, i, h.AnswerTop, h.Visible, h.TextTop)
			}
		}
	}
	// The line giving the answer is marked in the text (the long one too).
	marks := eval[[]string](t, b, `Array.from(document.querySelectorAll(".model-samples:first-of-type details.sample-correct pre.completion")).map(p => {
		const m = p.querySelector("mark.answer-line");
		return m ? m.textContent + "|" + (m.querySelector(".katex") ? "katex" : "") : "";
	})`)
	if len(marks) != 2 || !strings.HasPrefix(marks[0], "So the answer is ") || !strings.HasSuffix(marks[0], "|katex") || !strings.HasPrefix(marks[1], "So ") {
		t.Errorf("marked answer lines %q, want the \\boxed{2} lines, typeset", marks)
	}

	// The rendered markdown (shown first) marks the same lines, typeset.
	rendered := eval[[]string](t, b, `Array.from(document.querySelectorAll(".model-samples:first-of-type details.sample-correct .completion-md:not([hidden])")).map(p => {
		const m = p.querySelector("mark.answer-line");
		return m ? m.textContent + "|" + (m.querySelector(".katex") ? "katex" : "") : "";
	})`)
	if len(rendered) != 2 || !strings.HasPrefix(rendered[0], "So the answer is ") || !strings.HasSuffix(rendered[0], "|katex") || !strings.HasPrefix(rendered[1], "So ") {
		t.Errorf("marked answer lines in the rendered completions %q, want the \\boxed{2} lines, typeset", rendered)
	}

	// The answer distribution.
	type dist struct {
		Answer  string `json:"answer"`
		N       []int  `json:"n"`
		Correct bool   `json:"correct"`
	}
	rows := eval[[]dist](t, b, `Array.from(document.querySelectorAll("#answers tbody tr[data-answer]")).map(r => ({
		answer: r.dataset.answer, n: Array.from(r.querySelectorAll("td[data-model]")).map(c => +c.textContent),
		correct: r.classList.contains("answer-correct") && !!r.querySelector(".tag-correct")}))`)
	want := []dist{{"2", []int{2, 1}, true}, {"5", []int{0, 3}, false}, {"", []int{1, 0}, false}, {"3", []int{1, 0}, false}}
	if len(rows) != len(want) {
		t.Fatalf("answer distribution %v, want %v", rows, want)
	}
	for i := range want {
		if rows[i].Answer != want[i].Answer || !slices.Equal(rows[i].N, want[i].N) || rows[i].Correct != want[i].Correct {
			t.Errorf("answer row %d: %+v, want %+v", i, rows[i], want[i])
		}
	}
	eval[bool](t, b, `(document.querySelector("#answers").scrollIntoView(), true)`)
	b.screenshot(t, "problem-side-by-side")
	// An answer's samples only.
	b.clickAndWait(t, `#answers tr[data-answer="5"] a`, regexp.MustCompile(`[?&]answer=5`))
	shown := eval[[]int](t, b, `Array.from(document.querySelectorAll(".model-samples")).map(m => m.querySelectorAll("details.sample").length)`)
	if !slices.Equal(shown, []int{0, 3}) {
		t.Errorf("samples with answer 5 per model %v, want [0 3]", shown)
	}
	if f := eval[string](t, b, `(document.querySelector("#answer-filter code") || {}).textContent || ""`); f != "5" {
		t.Errorf("answer filter note shows %q", f)
	}

	// A hostile answer stays text, in the boxes and the distribution.
	b.open(t, fmt.Sprintf("%s/comparisons/%d?q=q2", a.url, id))
	b.clickAndWait(t, `#problem-table tr[data-key="q2"] a`, problemPath)
	b.noScriptRan(t)
	if n := eval[int](t, b, `document.querySelectorAll("main img, [onerror]").length`); n != 0 {
		t.Errorf("%d img elements or handlers on the problem page, want none", n)
	}
	answers := eval[string](t, b, `document.querySelector("#answers").innerText`)
	if !strings.Contains(answers, "<img") && !strings.Contains(answers, "no answer") {
		t.Errorf("answer distribution %q shows neither the hostile answer as text nor no answer", answers)
	}
	b.checkConsole(t)
}

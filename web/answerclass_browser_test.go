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

// jsonl is one JSON line per value.
func jsonl(t *testing.T, vs ...any) string {
	t.Helper()
	var s strings.Builder
	for _, v := range vs {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		s.Write(j)
		s.WriteByte('\n')
	}
	return s.String()
}

func memFile(name, body string) intake.File {
	return intake.File{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }}
}

// onePairOnOneProblem imports a base and an RL model's completions on one
// problem (id q1, reference answer ref) and returns the problem page's URL.
func onePairOnOneProblem(t *testing.T, a *app, b *browser, ref string, base, rl []string) string {
	t.Helper()
	samples := func(texts []string) string {
		var vs []any
		for j, text := range texts {
			vs = append(vs, map[string]any{"problem_id": "q1", "sample_index": j, "completion": text})
		}
		return jsonl(t, vs...)
	}
	id, _, err := intake.Create(context.Background(), a.st, a.client, intake.Spec{Name: "one problem",
		Dataset: memFile("d.jsonl", jsonl(t, map[string]string{"id": "q1", "problem": "What is $1/2$ as a number?", "answer": ref})),
		Models: []intake.Model{{Name: "base", File: memFile("base.jsonl", samples(base))},
			{Name: "rl", File: memFile("rl.jsonl", samples(rl))}}})
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t, id, 60*time.Second)
	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
	b.waitReport(t)
	return b.clickAndWait(t, `#problem-table tr[data-key="q1"] a`, problemPath)
}

// The answer distribution puts the spellings of one answer ("1/2", "0.5",
// "\frac{1}{2}") in one row, lists each spelling below it with its count
// per model, marks the correct class, and a spelling's link shows only its
// samples.
func TestBrowserAnswerClasses(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 90*time.Second)
	b.signIn(t, a)
	onePairOnOneProblem(t, a, b, `\frac{1}{2}`,
		[]string{`So $\boxed{1/2}$.`, `So $\boxed{0.5}$.`, `So $\boxed{\frac{1}{2}}$.`, `So $\boxed{3}$.`},
		[]string{`So $\boxed{0.5}$.`, `So $\boxed{0.5}$.`, `So $\boxed{3.0}$.`, `So $\boxed{7}$.`})
	type row struct {
		Answer    string `json:"answer"`
		Spellings string `json:"spellings"`
		N         []int  `json:"n"`
		Correct   bool   `json:"correct"`
	}
	rows := eval[[]row](t, b, `Array.from(document.querySelectorAll("#answers tbody tr[data-answer]")).map(r => ({
		answer: r.dataset.answer, spellings: r.dataset.spellings,
		n: Array.from(r.querySelectorAll("td[data-model]")).map(c => +c.textContent),
		correct: r.classList.contains("answer-correct") && !!r.querySelector(".tag-correct")}))`)
	want := []row{{Answer: "0.5", Spellings: "3", N: []int{3, 2}, Correct: true}, {Answer: "3", Spellings: "2", N: []int{1, 1}},
		{Answer: "7", Spellings: "1", N: []int{0, 1}}}
	if len(rows) != len(want) {
		t.Fatalf("answer rows %+v; want %+v", rows, want)
	}
	for i := range want {
		if rows[i].Answer != want[i].Answer || rows[i].Spellings != want[i].Spellings || !slices.Equal(rows[i].N, want[i].N) || rows[i].Correct != want[i].Correct {
			t.Errorf("answer row %d %+v; want %+v", i, rows[i], want[i])
		}
	}
	type spelling struct {
		Text string `json:"text"`
		N    []int  `json:"n"`
	}
	members := eval[[]spelling](t, b, `Array.from(document.querySelectorAll("#answers tbody tr.answer-member")).map(r => ({
		text: r.dataset.spelling, n: Array.from(r.querySelectorAll("td[data-spelling-model]")).map(c => +c.textContent)}))`)
	wantM := []spelling{{"0.5", []int{1, 2}}, {"1/2", []int{1, 0}}, {`\frac{1}{2}`, []int{1, 0}}, {"3", []int{1, 0}}, {"3.0", []int{0, 1}}}
	if fmt.Sprint(members) != fmt.Sprint(wantM) {
		t.Errorf("spellings %v; want %v", members, wantM)
	}
	eval[bool](t, b, `(document.querySelector("#answers").scrollIntoView(), true)`)
	b.screenshot(t, "problem-answer-classes")
	b.clickAndWait(t, `#answers tr.answer-member[data-spelling="3.0"] a`, regexp.MustCompile(`[?&]answer=3\.0`))
	shown := eval[[]int](t, b, `Array.from(document.querySelectorAll(".model-samples")).map(m => m.querySelectorAll("details.sample").length)`)
	if !slices.Equal(shown, []int{0, 1}) {
		t.Errorf("samples with answer 3.0 per model %v; want [0 1]", shown)
	}
	b.checkConsole(t)
}

package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/intake"
)

// Under the strict policy a sample graded correct from a fallback rule is
// not counted; its problem page offers to count it ("Mark correct") as
// well as "Mark incorrect", and counting it moves the model's c (issue
// 22.6: only "Mark incorrect" was offered).
func TestMarkUncountedCorrect(t *testing.T) {
	a := startApp(t)
	ctx := context.Background()
	samples := func(texts ...string) string {
		var vs []any
		for j, text := range texts {
			vs = append(vs, map[string]any{"problem_id": "q1", "sample_index": j, "completion": text})
		}
		return jsonl(t, vs...)
	}
	id, _, err := intake.Create(ctx, a.st, a.client, intake.Spec{Name: "fallback",
		Dataset: memFile("d.jsonl", jsonl(t, map[string]string{"id": "q1", "problem": "How many apples are 1 and 1 apples?", "answer": "2"})),
		Models: []intake.Model{{Name: "base", File: memFile("base.jsonl", samples("I count them and get 2", `So $\boxed{3}$.`))},
			{Name: "rl", File: memFile("rl.jsonl", samples(`So $\boxed{2}$.`, `So $\boxed{2}$.`))}}})
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t, id, time.Minute)
	c, err := a.st.GetComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Build(ctx, a.st, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Rows[0].Counts[0].C; got != 0 {
		t.Fatalf("base c = %d before the override; want 0 (the fallback-graded sample is not counted under strict)", got)
	}
	acct := newAccount(t, a.st, a.url, "editor@lab.org", true, "")
	page := getPage(t, a, acct, fmt.Sprintf("/comparisons/%d/problems/%d", id, rep.Rows[0].ProblemID))
	if !strings.Contains(page, "Mark correct (count it)") {
		t.Fatalf("the uncounted correct sample offers no way to count it")
	}
	form := url.Values{"status": {"correct"}, "note": {"the answer is right"}}
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/comparisons/%d/runs/%d/problems/%d/samples/0/verdict", a.url, id, c.Runs[0].ID, rep.Rows[0].ProblemID),
		strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", a.url)
	req.AddCookie(acct.Cookie)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		t.Fatalf("override: HTTP %d", resp.StatusCode)
	}
	rep, err = analysis.Build(ctx, a.st, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Rows[0].Counts[0].C; got != 1 {
		t.Errorf("base c = %d after counting the sample; want 1", got)
	}
}

package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/examples"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/testfiles"
)

// costSectionOf is the comparison page's Cost section, or "" when it has none.
func costSectionOf(page string) string {
	i := strings.Index(page, `id="cost"`)
	if i < 0 {
		return ""
	}
	j := strings.Index(page[i:], "</section>")
	if j < 0 {
		return page[i:]
	}
	return page[i : i+j]
}

// costRow is the Cost table's row of a model.
func costRow(t *testing.T, section, model string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr data-model="` + regexp.QuoteMeta(model) + `">(.*?)</tr>`).FindStringSubmatch(section)
	if m == nil {
		t.Fatalf("the Cost table has no row for %q:\n%s", model, section)
	}
	return m[1]
}

// Issue 25.5: the comparison page's Cost section, from files as uploaded.
// The truncated-length pair's base file (Reach JSONL) carries
// completion_tokens: t1 4,096 + 20, t2 4,096 + 12, so a mean of (2,058 +
// 2,054)/2 = 2,056 tokens per sample, 8,224 spent, and under the strict
// policy it solves t2 only: 8,224 per solved problem. Its RL file, with the
// counts taken out, has none, and the page says so naming the file; so does
// the shipped MATH500 example, counts files both.
func TestCostSection(t *testing.T) {
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "cost@lab.org", false, "editor")
	dir := testfiles.Path(t, "cases/from-reports/truncated-length")
	raw, err := os.ReadFile(filepath.Join(dir, "rl.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	stripped := regexp.MustCompile(`,\s*"completion_tokens":\s*\d+`).ReplaceAll(raw, nil)
	if bytes.Equal(stripped, raw) {
		t.Fatal("rl.jsonl has no completion_tokens to take out")
	}
	rlPath := filepath.Join(t.TempDir(), "rl-no-tokens.jsonl")
	if err := os.WriteFile(rlPath, stripped, 0o644); err != nil {
		t.Fatal(err)
	}
	id := upload(t, a, acct, "tokens and none", filepath.Join(dir, "dataset.jsonl"), [][3]string{
		{"base", "base", filepath.Join(dir, "base.jsonl")}, {"rl", "rl", rlPath}})
	var math500 int64
	for _, spec := range examples.Specs() {
		if strings.HasPrefix(spec.Name, "MATH500") {
			if math500, _, err = intake.Create(context.Background(), a.st, a.client, spec); err != nil {
				t.Fatal(err)
			}
		}
	}
	a.waitReady(t, id, 2*time.Minute)
	a.waitReady(t, math500, 2*time.Minute)

	section := costSectionOf(getPage(t, a, acct, fmt.Sprintf("/comparisons/%d", id)))
	if section == "" {
		t.Fatal("the comparison page has no Cost section")
	}
	if !strings.Contains(section, `id="cost-chart"`) || !strings.Contains(section, fmt.Sprintf(`id="cost_c%d"`, id)) {
		t.Errorf("the Cost section draws no chart:\n%s", section)
	}
	base := costRow(t, section, "base")
	for _, want := range []string{`<td class="num mean-tokens">2,056</td>`, "4 of 4 (100.00%)", "8,224"} {
		if !strings.Contains(base, want) {
			t.Errorf("base row lacks %q:\n%s", want, base)
		}
	}
	if strings.Contains(base, "≈") {
		t.Errorf("base row marks an estimate, but every sample had a count:\n%s", base)
	}
	if rl := costRow(t, section, "rl"); !strings.Contains(rl, "no token counts in rl-no-tokens.jsonl") {
		t.Errorf("rl row does not say its file had no token counts:\n%s", rl)
	}

	// The report JSON: models[].cost, with units in its names.
	code, body := get(t, fmt.Sprintf("%s/api/v1/comparisons/%d/report", a.url, id), "Authorization", "Bearer "+acct.Token)
	if code != 200 {
		t.Fatalf("report JSON: HTTP %d %.300s", code, body)
	}
	var rep analysis.Report
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	bc, rc := rep.Models[0].Cost, rep.Models[1].Cost
	if bc == nil || bc.TokensPerSolved == nil || *bc.TokensPerSolved != 8224 || *bc.MeanTokens != 2056 || bc.TokenShare != 1 || rep.Models[0].Solved != 1 {
		t.Errorf("base cost %+v (solved %d)", bc, rep.Models[0].Solved)
	}
	if len(bc.PassAtTokens) != 2 || bc.PassAtTokens[1].Tokens != 4112 || bc.PassAtTokens[1].Value != 0.5 {
		t.Errorf("base pass@k against tokens %+v; want pass@2 = 50%% at 4,112", bc.PassAtTokens)
	}
	if rc == nil || rc.MeanTokens != nil || rc.NoTokens != "no token counts in rl-no-tokens.jsonl" || rc.Samples != 4 {
		t.Errorf("rl cost %+v", rc)
	}

	// The chart's data: a row per model with counts and k.
	if csv := getPage(t, a, acct, fmt.Sprintf("/comparisons/%d/data/cost.csv", id)); !strings.HasPrefix(csv, "model,k,tokens_per_problem,pass_at_k\n") ||
		!strings.Contains(csv, "\nbase,2,4112,0.5\n") || strings.Contains(csv, "\nrl,") {
		t.Errorf("cost.csv:\n%s", csv)
	}

	// Counts files: no samples, so no counts, and no chart nor its data.
	section = costSectionOf(getPage(t, a, acct, fmt.Sprintf("/comparisons/%d", math500)))
	if strings.Contains(section, `id="cost-chart"`) {
		t.Error("the MATH500 counts comparison draws a cost chart")
	}
	if code, _ := get(t, fmt.Sprintf("%s/comparisons/%d/data/cost.json", a.url, math500), "Cookie", acct.Cookie.String()); code != 404 {
		t.Errorf("cost.json of a comparison without token counts: HTTP %d, want 404", code)
	}
	for _, m := range []struct{ name, file string }{{"Qwen2.5-7B", "qwen2.5-7b-base.csv"}, {"Qwen2.5-7B-SimpleRL-Zoo", "qwen2.5-7b-simplerl-zoo.csv"}} {
		if row := costRow(t, section, m.name); !strings.Contains(row, "no token counts in "+m.file) {
			t.Errorf("%s row does not say %s had no token counts:\n%s", m.name, m.file, row)
		}
	}
}

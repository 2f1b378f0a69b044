package web_test

import (
	"bytes"
	"context"
	"fmt"
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
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/store"
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
	for _, m := range models { // role, name, path (several files of one model: paths on lines)
		field("model_role", m[0])
		field("model_name", m[1])
		for _, p := range strings.Split(m[2], "\n") {
			file("model_file", p)
		}
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

// postNewComparison posts a multipart "new comparison" form body as acct
// and returns the status and the page (no redirect followed).
func postNewComparison(t *testing.T, a *app, acct account, body io.Reader, contentType string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, a.url+"/comparisons", body)
	req.Header.Set("Content-Type", contentType)
	req.AddCookie(acct.Cookie)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(page)
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
	q := repoData(t, "generations/math500-qwen3-4b-base-greedy")
	cases := []struct {
		name, dataset string
		models        [][3]string
		solved        [2]int
		kmax          int
	}{
		{"Qwen3-4B-Base greedy: qwen-boxed vs long-cot", repoData(t, "math500/test.jsonl"), [][3]string{
			{"base", "qwen-boxed", filepath.Join(q, "qwen-boxed__test_qwen-boxed_-1_seed0_t0.0_s0_e-1.jsonl")},
			{"rl", "long-cot", filepath.Join(q, "long-cot__test_long-cot_-1_seed0_t0.0_s0_e-1.jsonl")},
		}, [2]int{379, 379}, 1},
		{"HumanEval mistral vs zephyr", repoData(t, "humaneval/HumanEval.jsonl"), [][3]string{
			{"base", "mistral", repoData(t, "humaneval/samples-mistral-vs-zephyr/mistral_samples.jsonl_results.jsonl")},
			{"rl", "zephyr", repoData(t, "humaneval/samples-mistral-vs-zephyr/zephyr_samples.jsonl_results.jsonl")},
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
	status, page := postNewComparison(t, a, acct, &body, mw.FormDataContentType())
	if status != http.StatusBadRequest {
		t.Fatalf("HTTP %d; want 400", status)
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

// A model's samples in two files (one per seed, each problem's samples in both, sent in reverse
// order) upload together, pool per problem and give the tool-formats answer; the comparison page's
// source line names both files, sorted; the stored files are gone once imported.
func TestUploadSeveralFilesForOneModel(t *testing.T) {
	dir := toolCases(t)
	files, _ := filepath.Glob(filepath.Join(dir, "f_verl_*_validation_200.jsonl"))
	var base, rl string
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "_base") {
			base = f
		} else if strings.Contains(filepath.Base(f), "_rl") {
			rl = f
		}
	}
	data, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	seeds := t.TempDir()
	var parts [2]strings.Builder
	for i, l := range strings.Split(strings.TrimSpace(string(data)), "\n") { // 4 samples per problem: 2 in each file
		parts[(i%4)/2].WriteString(l + "\n")
	}
	for i, p := range parts {
		if err := os.WriteFile(filepath.Join(seeds, fmt.Sprintf("output-rs%d.jsonl", i)), []byte(p.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "seeds@lab.org", false, "editor")
	id := upload(t, a, acct, "seeds", filepath.Join(dir, "ds_math500_3.jsonl"), [][3]string{
		{"base", "base", filepath.Join(seeds, "output-rs1.jsonl") + "\n" + filepath.Join(seeds, "output-rs0.jsonl")}, {"rl", "rl", rl}})
	a.waitReady(t, id, 2*time.Minute)
	rep, err := analysis.Build(context.Background(), a.st, id)
	if err != nil {
		t.Fatal(err)
	}
	b, r := rep.Models[0], rep.Models[1]
	got := fmt.Sprintf("%.2f %.2f %.2f %.2f %+v", 100*b.Pass1, 100*b.PassAtK[len(b.PassAtK)-1].Value, 100*r.Pass1,
		100*r.PassAtK[len(r.PassAtK)-1].Value, rep.Pairs[0].Solved)
	if want := "50.00 100.00 66.67 66.67 {Both:2 BaseOnly:1 OtherOnly:0 Neither:0}"; got != want {
		t.Errorf("pass@1, pass@4 (base, RL), solved sets = %s; want %s", got, want)
	}
	page := getPage(t, a, acct, "/comparisons/"+strconv.FormatInt(id, 10))
	if !strings.Contains(page, "2 files: output-rs0.jsonl, output-rs1.jsonl") {
		t.Errorf("the comparison page does not name both files")
	}
	var n int
	if err := a.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM uploads`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d uploads left after the import (%v)", n, err)
	}
}

// A second file of another layout for one model is refused in words; nothing is kept.
func TestUploadSeveralFilesOneLayout(t *testing.T) {
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "uploader@lab.org", false, "editor")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("name", "seeds")
	w, _ := mw.CreateFormFile("dataset_file", "dataset.jsonl")
	_, _ = w.Write([]byte(`{"id": "a", "problem": "1+1?", "answer": "2"}` + "\n"))
	_ = mw.WriteField("model_role", "base")
	_ = mw.WriteField("model_name", "base")
	w, _ = mw.CreateFormFile("model_file", "output-rs0.jsonl")
	_, _ = w.Write([]byte(`{"problem_id": "a", "completion": "2"}` + "\n"))
	w, _ = mw.CreateFormFile("model_file", "output-rs1.jsonl")
	_, _ = w.Write([]byte(`{"task_id": "a", "completion": "2", "passed": true}` + "\n"))
	_ = mw.WriteField("model_role", "rl")
	_ = mw.WriteField("model_name", "rl")
	w, _ = mw.CreateFormFile("model_file", "rl.jsonl")
	_, _ = w.Write([]byte(`{"problem_id": "a", "completion": "2"}` + "\n"))
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
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(page), "output-rs1.jsonl is human-eval") ||
		!strings.Contains(string(page), "one model&#39;s files must share one layout") {
		t.Fatalf("HTTP %d; want 400 naming the file of another layout:\n%.3000s", resp.StatusCode, page)
	}
	var n int
	if err := a.st.Pool().QueryRow(context.Background(), `SELECT (SELECT count(*) FROM comparisons) + (SELECT count(*) FROM uploads)`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d comparisons and uploads stored (%v)", n, err)
	}
}

// A model's files named by training step as verl dumps them ({step}.jsonl)
// become one checkpoint per step; a base model's are refused in words.
func TestUploadTrainingRunFiles(t *testing.T) {
	dir := toolCases(t)
	files, _ := filepath.Glob(filepath.Join(dir, "f_verl_*_validation_200.jsonl"))
	var base, rl string
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "_base") {
			base = f
		} else if strings.Contains(filepath.Base(f), "_rl") {
			rl = f
		}
	}
	steps := t.TempDir()
	for i, src := range []string{base, rl} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(steps, fmt.Sprintf("%d.jsonl", 100*(i+1))), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "trainer@lab.org", false, "editor")
	id := upload(t, a, acct, "run", filepath.Join(dir, "ds_math500_3.jsonl"), [][3]string{
		{"base", "base", base}, {"rl", "ppo", filepath.Join(steps, "200.jsonl") + "\n" + filepath.Join(steps, "100.jsonl")}})
	a.waitReady(t, id, 2*time.Minute)
	rep, err := analysis.Build(context.Background(), a.st, id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tp := range rep.Trajectory {
		got = append(got, fmt.Sprintf("%s@%d %.2f", tp.Model, tp.Step, 100*tp.Pass1))
	}
	// Step 100 holds the base model's samples, step 200 the RL model's.
	if want := "base@0 50.00 ppo step 100@100 50.00 ppo step 200@200 66.67"; strings.Join(got, " ") != want {
		t.Errorf("trajectory %q; want %q", strings.Join(got, " "), want)
	}
	// The difficulty export: one record per problem and model, flows along the run.
	csv := getPage(t, a, acct, fmt.Sprintf("/comparisons/%d/difficulty.csv", id))
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) != 1+3*3 || lines[0] != "problem,problem_index,model,role,step,n,c,pass_rate,band,flow" {
		t.Fatalf("difficulty.csv:\n%s", csv)
	}
	flows := map[string]int{}
	for _, l := range lines[1:] {
		flows[l[strings.LastIndex(l, ",")+1:]]++
	}
	// Step 100 is the base model's samples again: every problem kept; step 200 (RL) gains nothing the base lacked.
	if flows["start"] != 3 || flows["gained"]+flows["lost"]+flows["regained"]+flows["kept-solved"]+flows["kept-unsolved"] != 6 {
		t.Errorf("flows %v", flows)
	}
}

// A checkpoint without a training step is refused in words (it would have
// no place on the trajectory), from the upload form and from intake.
func TestCheckpointNeedsAStep(t *testing.T) {
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "steps@lab.org", false, "editor")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("name", "no step")
	w, _ := mw.CreateFormFile("dataset_file", "dataset.jsonl")
	_, _ = w.Write([]byte(`{"id": "a", "problem": "1+1?", "answer": "2"}` + "\n"))
	for _, m := range [][2]string{{"base", "base"}, {"checkpoint", "ck"}} {
		_ = mw.WriteField("model_role", m[0])
		_ = mw.WriteField("model_name", m[1])
		w, _ := mw.CreateFormFile("model_file", m[1]+".jsonl")
		_, _ = w.Write([]byte(`{"problem_id": "a", "sample_index": 0, "completion": "2"}` + "\n"))
	}
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, a.url+"/comparisons", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.AddCookie(acct.Cookie)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(page), "RL checkpoint without a training step") {
		t.Errorf("checkpoint without a step: HTTP %d\n%.400s", resp.StatusCode, page)
	}
	_, _, err = intake.Create(context.Background(), a.st, a.client, intake.Spec{Name: "x", Dataset: memFile("d.jsonl", `{"id": "a", "problem": "1+1?", "answer": "2"}`+"\n"),
		Models: []intake.Model{{Name: "b", File: memFile("b.jsonl", "")}, {Name: "ck", Role: "checkpoint", File: memFile("c.jsonl", "")}}})
	if err == nil || !strings.Contains(err.Error(), "without a training step") {
		t.Errorf("intake: %v", err)
	}
}

// withLoadedDataset starts an app with an editor and a ready comparison
// whose dataset the new comparison form offers as loaded.
func withLoadedDataset(t *testing.T) (*app, account, store.Comparison) {
	t.Helper()
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "uploader@lab.org", false, "editor")
	def, err := a.st.DefaultProjectID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cid, _, _ := readyComparison(t, a.st, "earlier", def, "1+1?")
	c, err := a.st.GetComparison(context.Background(), cid)
	if err != nil || c.DatasetID == nil {
		t.Fatalf("comparison %d: dataset %v, %v", cid, c.DatasetID, err)
	}
	return a, acct, c
}

// A refused upload that used a loaded dataset keeps it chosen (the select
// went back to "upload a file instead", and a second try without noticing
// asked for a dataset file).
func TestRefusedUploadKeepsTheLoadedDataset(t *testing.T) {
	a, acct, c := withLoadedDataset(t)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("name", "second try")
	_ = mw.WriteField("dataset_id", strconv.FormatInt(*c.DatasetID, 10))
	for _, m := range []string{"base", "rl"} {
		_ = mw.WriteField("model_role", m)
		_ = mw.WriteField("model_name", m)
		w, _ := mw.CreateFormFile("model_file", "chart.png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	}
	_ = mw.Close()
	status, page := postNewComparison(t, a, acct, &body, mw.FormDataContentType())
	if status != http.StatusBadRequest {
		t.Fatalf("HTTP %d; want 400", status)
	}
	if want := fmt.Sprintf(`<option value="%d" selected>`, *c.DatasetID); !strings.Contains(page, want) {
		t.Errorf("the refused form does not keep the loaded dataset chosen (%s)", want)
	}
}

// The same file picked twice for one model (identical bytes, under either
// name) is refused in words: pooled, each sample counted twice and n
// doubled with no warning. Nothing is kept. Files of equal size but other
// bytes are pooled as before.
func TestUploadIdenticalFilesForOneModel(t *testing.T) {
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "uploader@lab.org", false, "editor")
	post := func(second string, secondBody string) (int, string) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		_ = mw.WriteField("name", "twice")
		w, _ := mw.CreateFormFile("dataset_file", "dataset.jsonl")
		_, _ = w.Write([]byte(`{"id": "a", "problem": "1+1?", "answer": "2"}` + "\n"))
		_ = mw.WriteField("model_role", "base")
		_ = mw.WriteField("model_name", "base")
		w, _ = mw.CreateFormFile("model_file", "base.jsonl")
		_, _ = w.Write([]byte(`{"problem_id": "a", "completion": "\\boxed{2}"}` + "\n"))
		_ = mw.WriteField("model_role", "rl")
		_ = mw.WriteField("model_name", "rl")
		w, _ = mw.CreateFormFile("model_file", "rl.jsonl")
		_, _ = w.Write([]byte(`{"problem_id": "a", "completion": "\\boxed{3}"}` + "\n"))
		w, _ = mw.CreateFormFile("model_file", second)
		_, _ = w.Write([]byte(secondBody))
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
		return resp.StatusCode, string(page)
	}
	for _, name := range []string{"rl.jsonl", "rl-copy.jsonl"} {
		code, page := post(name, `{"problem_id": "a", "completion": "\\boxed{3}"}`+"\n")
		if code != http.StatusBadRequest || !strings.Contains(page, "are the same file (identical bytes") || !strings.Contains(page, "would count twice") {
			t.Errorf("%s: HTTP %d; want 400 naming the identical files:\n%.2000s", name, code, page)
		}
		var n int
		if err := a.st.Pool().QueryRow(context.Background(), `SELECT (SELECT count(*) FROM comparisons) + (SELECT count(*) FROM uploads)`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d comparisons and uploads stored (%v)", name, n, err)
		}
	}
	if code, page := post("rl-seed1.jsonl", `{"problem_id": "a", "completion": "\\boxed{2}"}`+"\n"); code != http.StatusSeeOther {
		t.Errorf("two seeds' files of equal size: HTTP %d, want 303:\n%.2000s", code, page)
	}
}

// A form that chooses a loaded dataset and uploads a dataset file is
// refused, naming both, and stores nothing (the file was used silently).
func TestLoadedDatasetAndDatasetFileRefused(t *testing.T) {
	a, acct, c := withLoadedDataset(t)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("name", "both")
	_ = mw.WriteField("dataset_id", strconv.FormatInt(*c.DatasetID, 10))
	w, _ := mw.CreateFormFile("dataset_file", "other-dataset.jsonl")
	_, _ = w.Write([]byte(`{"id": "a", "problem": "1+1?", "answer": "2"}` + "\n"))
	for _, m := range []string{"base", "rl"} {
		_ = mw.WriteField("model_role", m)
		_ = mw.WriteField("model_name", m)
		w, _ := mw.CreateFormFile("model_file", m+".jsonl")
		_, _ = w.Write([]byte(`{"id": "a", "completion": "2", "correct": true}` + "\n"))
	}
	_ = mw.Close()
	status, page := postNewComparison(t, a, acct, &body, mw.FormDataContentType())
	if status != http.StatusBadRequest || !strings.Contains(page, "a loaded dataset is chosen and a dataset file (&#34;other-dataset.jsonl&#34;) is uploaded") {
		t.Errorf("HTTP %d; want 400 naming both choices", status)
	}
	var n int
	if err := a.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM comparisons WHERE name = 'both'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d comparisons stored (%v)", n, err)
	}
}

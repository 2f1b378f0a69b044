package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/export"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testfiles"
)

// toolCases is the carried cases/tool-formats (its README: every pair has one
// known answer).
func toolCases(t *testing.T) string {
	t.Helper()
	return testfiles.Path(t, "cases/tool-formats")
}

// Every tool-formats pair uploads through the new-comparison form, is
// recognised without a mapping, gives the known answer (base pass@1 50 %,
// pass@4 100 %; RL 66.67 %, 66.67 %; both 2, base-only 1) and the comparison
// page names the layout each file was read as.
func TestUploadToolFormats(t *testing.T) {
	dir := toolCases(t)
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "tools@lab.org", false, "editor")
	for _, tc := range []struct{ tool, glob, dataset, layout, meta string }{
		{"lm-eval", "a_lmeval_*_samples_math_500_*.jsonl", "ds_math500_3.jsonl", "lm-evaluation-harness --log_samples", "temperature 0.6"},
		{"lm-eval filters", "a_lmeval_*_samples_gsm8k_*.jsonl", "ds_gsm8k_3.jsonl", "lm-evaluation-harness --log_samples", "task gsm8k_cot_self_consistency"},
		{"lighteval parquet", "b_lighteval_*_details_lighteval_*.parquet", "ds_math500_3.jsonl", "lighteval details", ""},
		{"lighteval old", "b_lighteval_old_*.jsonl", "ds_math500_3.jsonl", "lighteval details", ""},
		{"inspect eval", "c_inspect_*.eval", "ds_gsm8k_3.jsonl", "Inspect AI log", "model vllm/Qwen/Qwen2.5-7B"},
		{"inspect json", "c_inspect_*.json", "ds_gsm8k_3.jsonl", "Inspect AI log", "epochs 4"},
		{"verl validation", "f_verl_*_validation_200.jsonl", "ds_math500_3.jsonl", "verl validation generations", "step 200"},
		{"verl main_generation", "f_verl_main_generation_*.jsonl", "ds_math500_3.jsonl", "verl main_generation output", ""},
		{"openai batch", "g_openai_batch_*_output.jsonl", "ds_math500_3.jsonl", "OpenAI Batch API output", "model base"},
		{"vllm", "g_vllm_requestoutput_*.jsonl", "ds_math500_3.jsonl", "vLLM RequestOutput JSON", ""},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join(dir, tc.glob))
			var base, rl string
			for _, f := range files {
				if strings.Contains(filepath.Base(f), "_base") {
					base = f
				} else if strings.Contains(filepath.Base(f), "_rl") {
					rl = f
				}
			}
			id := upload(t, a, acct, tc.tool, filepath.Join(dir, tc.dataset), [][3]string{{"base", "base", base}, {"rl", "rl", rl}})
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
			if !strings.Contains(page, `id="samples-source"`) || !strings.Contains(page, tc.layout) || !strings.Contains(page, tc.meta) {
				t.Errorf("the comparison page does not say the files were read as %q with %q", tc.layout, tc.meta)
			}
			if prog := getPage(t, a, acct, fmt.Sprintf("/comparisons/%d/progress", id)); !strings.Contains(prog, "read as "+tc.layout) {
				t.Errorf("the progress page does not name the layout %q", tc.layout)
			}
			if !strings.Contains(page, fmt.Sprintf(`href="/comparisons/%d/samples.parquet"`, id)) {
				t.Error("the comparison page has no export link")
			}
			// The per-sample export, both formats: 24 samples, 6 + 8 correct, each with its verdict's source.
			jl := getPage(t, a, acct, fmt.Sprintf("/comparisons/%d/samples.jsonl", id))
			pq := getPage(t, a, acct, fmt.Sprintf("/api/v1/comparisons/%d/samples.parquet", id))
			rows, err := parquet.Read[export.Record](strings.NewReader(pq), int64(len(pq)))
			if err != nil {
				t.Fatal(err)
			}
			var fromJSON []export.Record
			for _, l := range strings.Split(strings.TrimSpace(jl), "\n") {
				var r export.Record
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatal(err)
				}
				fromJSON = append(fromJSON, r)
			}
			for name, rs := range map[string][]export.Record{"jsonl": fromJSON, "parquet": rows} {
				correct := map[string]int{}
				for _, r := range rs {
					if r.Correct != nil && *r.Correct {
						correct[r.Model]++
					}
					if r.Completion == "" || r.VerdictSource == "" || r.Problem == "" {
						t.Errorf("%s: record %+v", name, r)
						break
					}
				}
				if len(rs) != 24 || correct["base"] != 6 || correct["rl"] != 8 {
					t.Errorf("%s export: %d records, correct %v; want 24, base 6, rl 8", name, len(rs), correct)
				}
			}
		})
	}
}

// apiDo sends a request with the account's API token and decodes a JSON answer.
func apiDo(t *testing.T, acct account, method, url, ctype string, body io.Reader, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	req.Header.Set("Authorization", "Bearer "+acct.Token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: HTTP %d, not JSON: %s", method, url, resp.StatusCode, brief(string(b)))
		}
	}
	return resp.StatusCode
}

// multipartFiles builds the upload form's body.
func multipartFiles(t *testing.T, name string, files map[string][2]string) (string, *bytes.Buffer) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("name", name)
	if p, ok := files["project"]; ok { // a form field, not a file
		_ = mw.WriteField("project", p[1])
	}
	for _, key := range []string{"dataset_file", "base", "rl"} {
		f, ok := files[key]
		if !ok {
			continue
		}
		if key != "dataset_file" {
			_ = mw.WriteField("model_role", key)
			_ = mw.WriteField("model_name", key)
			key = "model_file"
		}
		w, _ := mw.CreateFormFile(key, f[0])
		_, _ = io.WriteString(w, f[1])
	}
	_ = mw.Close()
	return mw.FormDataContentType(), &body
}

// A token user uploads a file in no known layout: the comparison waits at
// needs-mapping; the API shows the guess and the file's fields down to nested
// ones, refuses a mapping that does not fit the file, and takes one that does.
// Files that are not samples at all are refused at once, saying what they are.
func TestAPIMapping(t *testing.T) {
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "script@lab.org", false, "editor")
	dataset := `{"id": "p1", "problem": "What is 2+3?", "answer": "5"}` + "\n" + `{"id": "p2", "problem": "What is 7*6?", "answer": "42"}` + "\n"
	line := func(pid string, texts []string, ok []bool) string {
		var runs []map[string]any
		for i, s := range texts {
			runs = append(runs, map[string]any{"out": map[string]any{"text": s, "meta": map[string]any{"finish": "stop"}}, "grade": map[string]any{"ok": ok[i]}})
		}
		b, _ := json.Marshal(map[string]any{"task": map[string]any{"name": pid}, "attempts": runs})
		return string(b) + "\n"
	}
	samples := line("p1", []string{"2+3 = \\boxed{5}", "I think \\boxed{6}"}, []bool{true, false}) +
		line("p2", []string{"7*6 = \\boxed{42}", "\\boxed{42}"}, []bool{true, true})
	ctype, body := multipartFiles(t, "nested layout", map[string][2]string{"dataset_file": {"ds.jsonl", dataset},
		"base": {"base.jsonl", samples}, "rl": {"rl.jsonl", samples}})
	// A project that is not one of the user's is named in the refusal
	// (it said "your role in that project does not allow this").
	{
		ctype, body := multipartFiles(t, "nested layout", map[string][2]string{"dataset_file": {"ds.jsonl", dataset},
			"base": {"base.jsonl", samples}, "rl": {"rl.jsonl", samples}, "project": {"", "Team B"}})
		var fail struct{ Error string }
		if code := apiDo(t, acct, "POST", a.url+"/api/v1/comparisons", ctype, body, &fail); code != 403 || !strings.Contains(fail.Error, `project "Team B" is not a project of yours`) {
			t.Errorf("upload to a project that does not exist: HTTP %d %q", code, fail.Error)
		}
	}
	var created struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	if code := apiDo(t, acct, "POST", a.url+"/api/v1/comparisons", ctype, body, &created); code != 202 || created.Status != store.StatusNeedsMapping {
		t.Fatalf("upload: HTTP %d, status %q; want 202, needs-mapping", code, created.Status)
	}
	base := fmt.Sprintf("%s/api/v1/comparisons/%d/mapping", a.url, created.ID)
	var st struct {
		Status string `json:"status"`
		Runs   []struct {
			Model      string            `json:"model"`
			Guess      map[string]string `json:"guess"`
			Fields     []string          `json:"fields"`
			ItemFields []string          `json:"item_fields"`
		} `json:"runs"`
	}
	if code := apiDo(t, acct, "GET", base, "", nil, &st); code != 200 || len(st.Runs) != 2 {
		t.Fatalf("GET mapping: HTTP %d, %+v", code, st)
	}
	r0 := st.Runs[0]
	if !strings.Contains(strings.Join(r0.Fields, " "), "task.name") || !strings.Contains(strings.Join(r0.ItemFields, " "), "out.meta.finish") ||
		r0.Guess["list"] != "attempts" {
		t.Errorf("fields %v, item fields %v, guess %v: want nested paths task.name, out.meta.finish and the list attempts", r0.Fields, r0.ItemFields, r0.Guess)
	}
	// A mapping whose completion path is not in the file is refused, naming the model and the field.
	bad := `{"mappings": {"base": {"problem_id": "task.name", "list": "attempts", "completion": "out.txt"}, "rl": {"problem_id": "task.name", "list": "attempts", "completion": "out.text"}}}`
	var fail struct{ Error string }
	if code := apiDo(t, acct, "POST", base, "application/json", strings.NewReader(bad), &fail); code != 400 || !strings.Contains(fail.Error, "base") || !strings.Contains(fail.Error, "attempts[0].out.txt") {
		t.Errorf("bad mapping: HTTP %d %q; want 400 naming base and attempts[0].out.txt", code, fail.Error)
	}
	good := `{"mappings": {"base": {"problem_id": "task.name", "list": "attempts", "completion": "out.text", "correct": "grade.ok", "finish_reason": "out.meta.finish"}}, "accept_guess": false}`
	if code := apiDo(t, acct, "POST", base, "application/json", strings.NewReader(good), &fail); code != 400 || !strings.Contains(fail.Error, "rl: no field mapping given") {
		t.Errorf("one mapping of two: HTTP %d %q", code, fail.Error)
	}
	good = `{"mappings": {"base": {"problem_id": "task.name", "list": "attempts", "completion": "out.text", "correct": "grade.ok", "finish_reason": "out.meta.finish"},
		"rl": {"problem_id": "task.name", "list": "attempts", "completion": "out.text"}}}`
	if code := apiDo(t, acct, "POST", base, "application/json", strings.NewReader(good), nil); code != 202 {
		t.Fatalf("good mapping: HTTP %d", code)
	}
	a.waitReady(t, created.ID, time.Minute)
	rep, err := analysis.Build(context.Background(), a.st, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	// base: the file's labels (1/2, 2/2); rl: Reach's verifier (the same texts, the same verdicts).
	if rep.Models[0].Pass1 != 0.75 || rep.Models[1].Pass1 != 0.75 || rep.Models[0].VerdictSource != "file" {
		t.Errorf("pass@1 %v / %v, verdicts by %q", rep.Models[0].Pass1, rep.Models[1].Pass1, rep.Models[0].VerdictSource)
	}
	if code := apiDo(t, acct, "POST", base, "application/json", strings.NewReader(good), &fail); code != 409 {
		t.Errorf("confirming again: HTTP %d, want 409", code)
	}

	// A NUL character in a completion (Postgres text cannot hold it) is removed; the import says so
	// on the comparison page.
	nul := `{"problem_id": "p1", "completion": "2+3 = \\boxed{5}\u0000"}` + "\n" + `{"problem_id": "p2", "completion": "\\boxed{42}"}` + "\n"
	ctype, body = multipartFiles(t, "nul", map[string][2]string{"dataset_file": {"ds.jsonl", dataset}, "base": {"nul_byte.jsonl", nul}, "rl": {"rl.jsonl", nul}})
	if code := apiDo(t, acct, "POST", a.url+"/api/v1/comparisons", ctype, body, &created); code != 202 {
		t.Fatalf("NUL upload: HTTP %d", code)
	}
	a.waitReady(t, created.ID, time.Minute)
	page := getPage(t, a, acct, fmt.Sprintf("/comparisons/%d", created.ID))
	if !strings.Contains(page, "1 import warning:") || !strings.Contains(page, "nul_byte.jsonl:1: removed 1 NUL character(s)") {
		t.Error("the comparison page does not report the removed NUL character")
	}

	// Not samples files: refused at once, saying what they look like.
	for _, tc := range []struct{ name, body, want string }{
		{"ds.jsonl", dataset, "a dataset"},
		{"plot.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "a PNG image"},
		{"config.yaml", "model: qwen\ntasks:\n  - gsm8k\nbatch_size: 8\n", "a YAML or config file"},
		{"results.json", `{"results": {"gsm8k": {"exact_match,strict-match": 0.5}}, "versions": {"gsm8k": 3}, "configs": {}}`, "an evaluation results summary"},
	} {
		ctype, body := multipartFiles(t, "not samples", map[string][2]string{"dataset_file": {"ds.jsonl", dataset},
			"base": {tc.name, tc.body}, "rl": {"rl.jsonl", samples}})
		if code := apiDo(t, acct, "POST", a.url+"/api/v1/comparisons", ctype, body, &fail); code != 400 || !strings.Contains(fail.Error, tc.want) {
			t.Errorf("%s as samples: HTTP %d %q; want 400 saying %q", tc.name, code, fail.Error, tc.want)
		}
	}
}

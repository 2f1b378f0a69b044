package ingest

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/tidwall/gjson"
)

const toolsDir = "testdata/tools"

// readBytes is importFile on bytes: sniffed, read and matched against ds as an import does.
func readBytes(t *testing.T, name string, data []byte, ds []MatchProblem) (matched, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return importFile(t, path, ds)
}

func toolFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(toolsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// perProblem groups a read's samples by problem key and sample index.
func perProblem(m matched) map[string][]Sample {
	out := map[string][]Sample{}
	for _, s := range m.samples {
		out[s.ProblemKey] = append(out[s.ProblemKey], s)
	}
	return out
}

func TestToolFixtures(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	code := readDatasetFile(t, filepath.Join(toolsDir, "dataset_code.jsonl"))
	for _, tc := range []struct {
		file   string
		ds     []MatchProblem
		format Format
		n      []int // samples per dataset problem
		c      []int // file verdicts "correct" per problem
		labels int
		check  func(t *testing.T, m matched)
	}{
		{"lmeval_samples_own_words_2026-01-02T03-04-05.678901.jsonl", words, FormatLMEval, []int{0, 2, 2, 2}, []int{0, 0, 0, 0}, 0,
			func(t *testing.T, m matched) {
				if m.meta.Task != "own_words" || m.meta.Date != "2026-01-02T03-04-05.678901" || m.meta.Settings["temperature"] != "0.7" ||
					m.meta.Settings["until"] != `["Question:", "</s>", "<|im_end|>"]` {
					t.Errorf("meta %+v", m.meta)
				}
				if s := m.samples[0]; !strings.HasPrefix(s.Completion, "It holds 30 litres") || !strings.HasSuffix(s.Reference, "#### 90") {
					t.Errorf("first sample %+v", s)
				}
			}},
		{"inspect_own_words.json", words, FormatInspect, []int{2, 2, 2, 2}, []int{1, 1, 1, 2}, 8,
			func(t *testing.T, m matched) {
				cut := m.samples[3] // problem 2, epoch 2
				if cut.FinishReason != "length" || cut.CompletionTokens != 64 || cut.Completion != "120 / 4 = 30 so" || cut.SampleIndex != 1 {
					t.Errorf("the max_tokens sample: %+v", cut)
				}
				if m.meta.Model != "vllm/own-7b" || m.meta.ToolVersion != "0.3.99" || m.meta.Settings["max_tokens"] != "64" || m.meta.Settings["epochs"] != "2" {
					t.Errorf("meta %+v", m.meta)
				}
				if m.samples[0].Extracted != "23" || strings.Contains(m.samples[0].Completion, "Let me add") {
					t.Errorf("first sample (answer, no reasoning part): %+v", m.samples[0])
				}
			}},
		{"openai_batch_output.jsonl", words, FormatOpenAIBatch, []int{2, 2, 2, 2}, []int{0, 0, 0, 0}, 0,
			func(t *testing.T, m matched) {
				if m.samples[1].FinishReason != "length" || m.samples[1].SampleIndex != 1 || m.meta.Model != "gpt-own-mini" || m.how != "by id" {
					t.Errorf("sample %+v, meta %+v, %s", m.samples[1], m.meta, m.how)
				}
			}},
		{"opencompass_predictions_own_words.json", words, FormatOpenCompass, []int{2, 2, 2, 2}, []int{0, 0, 0, 0}, 0,
			func(t *testing.T, m matched) {
				if m.how != "by position (repeated dataset)" || m.samples[4].ProblemKey != "4" || m.samples[4].Completion != "So the answer is 7." {
					t.Errorf("%s, sample 4 %+v", m.how, m.samples[4])
				}
			}},
		{"opencompass_results_own_words.json", words, FormatOpenCompass, []int{2, 2, 2, 2}, []int{1, 1, 1, 1}, 8,
			func(t *testing.T, m matched) {
				if m.samples[1].Extracted != "7" || m.meta.Settings["accuracy (2 runs average)"] != "50.0" {
					t.Errorf("sample %+v meta %+v", m.samples[1], m.meta)
				}
			}},
		{"verl_val_150.jsonl", words, FormatVerlValidation, []int{2, 2, 2, 0}, []int{2, 1, 2, 0}, 6,
			func(t *testing.T, m matched) {
				if m.how != "by statement" || m.meta.Settings["step"] != "150" || m.samples[3].Extracted != "5" {
					t.Errorf("%s meta %+v sample %+v", m.how, m.meta, m.samples[3])
				}
			}},
		{"vllm_outputs.jsonl", words, FormatVLLM, []int{2, 2, 2, 2}, []int{0, 0, 0, 0}, 0,
			func(t *testing.T, m matched) {
				// request ids are not dataset ids: matched by the statement in the prompt.
				if m.how != "by statement" || m.samples[1].FinishReason != "length" || m.samples[1].CompletionTokens != 6 {
					t.Errorf("%s sample %+v", m.how, m.samples[1])
				}
			}},
		{"hf_generations_openr1.jsonl", words, FormatHFGenerations, []int{2, 2, 2, 2}, []int{1, 1, 1, 1}, 8,
			func(t *testing.T, m matched) {
				if m.how != "by statement" || m.samples[0].ProblemKey != "u-0000" {
					t.Errorf("%s sample %+v", m.how, m.samples[0])
				}
			}},
		{"evalplus_eval_results.json", code, FormatEvalPlusResults, []int{2, 2}, []int{1, 1}, 4,
			func(t *testing.T, m matched) {
				// OwnEval/0: base pass + plus fail is not a solve; base pass with plus not run is.
				by := perProblem(m)
				if r := by["OwnEval/0"]; len(r) != 2 || *r[0].Correct || r[0].Reason != "base: pass, plus: fail" || r[1].Reason != "base: pass, plus: not run" {
					t.Errorf("OwnEval/0 %+v", r)
				}
				if m.meta.Date != "2026-01-02 03:04" {
					t.Errorf("meta %+v", m.meta)
				}
			}},
		{"evalplus_old_eval_results.json", code, FormatEvalPlusResults, []int{2, 2}, []int{0, 1}, 4, nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			m, err := readBytes(t, tc.file, toolFile(t, tc.file), tc.ds)
			if err != nil {
				t.Fatal(err)
			}
			if m.format != tc.format || !slices.Equal(m.n, tc.n) || m.labels != tc.labels || (tc.labels > 0 && !slices.Equal(m.c, tc.c)) {
				t.Errorf("format %s, n %v, labels %d, correct %v; want %s, %v, %d, %v", m.format, m.n, m.labels, m.c, tc.format, tc.n, tc.labels, tc.c)
			}
			if tc.check != nil {
				tc.check(t, m)
			}
		})
	}
}

// The Inspect .eval zip (written here from the .json log's samples, as Inspect lays it out) reads
// like the .json; gzip and zstd are looked through; a JSON list of records reads like JSONL.
func TestToolContainers(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	logJSON := toolFile(t, "inspect_own_words.json")
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	add := func(name string, v any) {
		w, _ := zw.Create(name)
		b, _ := json.Marshal(v)
		w.Write(b)
	}
	log := gjson.ParseBytes(logJSON)
	add("_journal/start.json", map[string]any{"version": 2, "eval": log.Get("eval").Value(), "plan": log.Get("plan").Value()})
	for _, s := range log.Get("samples").Array() {
		add(fmt.Sprintf("samples/%d_epoch_%d.json", s.Get("id").Int(), s.Get("epoch").Int()), s.Value())
	}
	add("header.json", map[string]any{"version": 2, "status": "success", "eval": log.Get("eval").Value(), "results": log.Get("results").Value()})
	zw.Close()
	fromJSON, err := readBytes(t, "own.json", logJSON, words)
	if err != nil {
		t.Fatal(err)
	}
	fromZip, err := readBytes(t, "own.eval", zb.Bytes(), words)
	if err != nil {
		t.Fatal(err)
	}
	if fromZip.format != FormatInspect || !slices.Equal(fromZip.c, fromJSON.c) || !slices.Equal(fromZip.n, fromJSON.n) {
		t.Errorf(".eval: %s %v %v; .json %v %v", fromZip.format, fromZip.n, fromZip.c, fromJSON.n, fromJSON.c)
	}
	sameSamples(t, unplaced(fromZip.samples), unplaced(fromJSON.samples))

	lm := toolFile(t, "lmeval_samples_own_words_2026-01-02T03-04-05.678901.jsonl")
	plain, err := readBytes(t, "lm.jsonl", lm, words)
	if err != nil {
		t.Fatal(err)
	}
	var gz, zs bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(lm)
	gw.Close()
	zsw, _ := zstd.NewWriter(&zs)
	zsw.Write(lm)
	zsw.Close()
	for name, data := range map[string][]byte{"lm.jsonl.gz": gz.Bytes(), "lm.jsonl.zst": zs.Bytes()} {
		got, err := readBytes(t, name, data, words)
		if err != nil || got.format != FormatLMEval {
			t.Fatalf("%s: %s %v", name, got.format, err)
		}
		sameSamples(t, got.samples, plain.samples)
	}
	// A cut gzip file is the file's fault, named as such.
	if _, err := readBytes(t, "cut.jsonl.gz", gz.Bytes()[:gz.Len()/2], words); err == nil || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("cut gzip: %v", err)
	}
	// The OpenAI batch lines as one JSON list.
	var recs []json.RawMessage
	for _, l := range bytes.Split(bytes.TrimSpace(toolFile(t, "openai_batch_output.jsonl")), []byte("\n")) {
		recs = append(recs, l)
	}
	list, _ := json.Marshal(recs)
	got, err := readBytes(t, "batch.json", list, words)
	if err != nil || got.format != FormatOpenAIBatch || !slices.Equal(got.n, []int{2, 2, 2, 2}) || got.samples[2].Record != "[1]" {
		t.Errorf("JSON list: %s %v %v %+v", got.format, got.n, err, got.samples[2])
	}
}

// unplaced drops where samples came from (a zip member, a document line), to compare containers.
func unplaced(ss []Sample) []Sample {
	out := slices.Clone(ss)
	for i := range out {
		out[i].Line, out[i].Record = 0, ""
	}
	return out
}

// Parquet files in the layouts of lighteval details, verl main_generation, TRL logged completions
// and released generations, written here with parquet-go: each recognised from its columns.
func TestToolParquet(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	write := func(rows any) []byte {
		var b bytes.Buffer
		var err error
		switch r := rows.(type) {
		case []lightevalRow:
			err = parquet.Write(&b, r)
		case []verlGenRow:
			err = parquet.Write(&b, r)
		case []trlRow:
			err = parquet.Write(&b, r)
		case []hfRow:
			err = parquet.Write(&b, r)
		}
		if err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	var le []lightevalRow
	var vg []verlGenRow
	var tr []trlRow
	var hf []hfRow
	for i, p := range words {
		texts := []string{fmt.Sprintf("The answer is \\boxed{%s}.", p.Reference), "I am not sure."}
		le = append(le, lightevalRow{Doc: lightevalDoc{Query: "Solve: " + p.Statement, Choices: []string{p.Reference}, GoldIndex: 0, ID: fmt.Sprint(i), TaskName: "own|words|0"},
			ModelResponse: lightevalResponse{Input: "Solve: " + p.Statement, Text: texts}, Metric: lightevalMetric{PassAt1: 0.5}})
		vg = append(vg, verlGenRow{DataSource: "own", Prompt: []verlMsg{{Role: "user", Content: p.Statement + " Let's think step by step."}}, Ability: "math",
			RewardModel: verlReward{Style: "rule", GroundTruth: p.Reference}, ExtraInfo: verlExtra{Split: "test", Index: int64(i)}, Responses: texts})
		for k, c := range texts {
			tr = append(tr, trlRow{Step: 40, Prompt: "<|user|>" + p.Statement + "<|assistant|>", Completion: c, AccuracyReward: float64(1 - k), Advantage: 0.5 - float64(k)})
		}
		hf = append(hf, hfRow{Problem: p.Statement, Answer: p.Reference, UUID: fmt.Sprintf("u%d", i), Generations: texts, Correctness: []bool{true, false}, FinishReasons: []string{"stop", "length"}})
	}
	for _, tc := range []struct {
		name   string
		data   []byte
		format Format
		labels int
	}{
		{"details_own|words|0_2026-01-02T03-04-05.parquet", write(le), FormatLighteval, 0},
		{"generated.parquet", write(vg), FormatVerlGeneration, 0},
		{"completions_00040.parquet", write(tr), FormatTRLCompletions, 0},
		{"openr1.parquet", write(hf), FormatHFGenerations, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readBytes(t, tc.name, tc.data, words)
			if err != nil {
				t.Fatal(err)
			}
			ex, err := Examine(bytes.NewReader(tc.data), tc.name)
			if err != nil || ex.Format != tc.format {
				t.Errorf("Examine: %s %v; want %s", ex.Format, err, tc.format)
			}
			if got.format != FormatParquet || !slices.Equal(got.n, []int{2, 2, 2, 2}) || got.labels != tc.labels || got.samples[0].Record != "row 1" {
				t.Errorf("sniffed %s, n %v, labels %d, first %+v", got.format, got.n, got.labels, got.samples[0])
			}
		})
	}
}

type attempt struct {
	Txt string `parquet:"txt"`
	OK  bool   `parquet:"ok"`
}
type unknownRow struct {
	Qid      string    `parquet:"qid"`
	Attempts []attempt `parquet:"attempts,list"`
}

// A parquet file in no known layout: Examine guesses a mapping from its columns (nested ones
// included), and the file reads through it like JSONL.
func TestParquetMapped(t *testing.T) {
	var b bytes.Buffer
	rows := []unknownRow{{Qid: "own/0", Attempts: []attempt{{"x = 23", true}, {"x = 22", false}}}, {Qid: "own/3", Attempts: []attempt{{"42", true}}}}
	if err := parquet.Write(&b, rows); err != nil {
		t.Fatal(err)
	}
	ex, err := Examine(bytes.NewReader(b.Bytes()), "run.parquet")
	if err != nil || ex.Format != FormatMapped || ex.Mapping == nil || ex.Mapping.ProblemID != "qid" ||
		!slices.Contains(ex.ItemFields, "txt") || !strings.Contains(ex.Preview, `"qid":"own/0"`) {
		t.Fatalf("Examine: %+v %v", ex, err)
	}
	m := Mapping{ProblemID: "qid", List: "attempts", Completion: "txt", Correct: "ok"}
	var got []Sample
	err = Read(bytes.NewReader(b.Bytes()), "run.parquet", FormatMapped, &m, Options{OnSample: func(s Sample) error { got = append(got, s); return nil }})
	if err != nil || len(got) != 3 || got[1].Completion != "x = 22" || *got[1].Correct || got[2].ProblemKey != "own/3" || got[2].Record != "row 2" {
		t.Errorf("read: %v %+v", err, got)
	}
	// Without a mapping the layout is refused, naming its columns.
	err = Read(bytes.NewReader(b.Bytes()), "run.parquet", FormatParquet, nil, Options{OnSample: func(Sample) error { return nil }})
	if err == nil || !strings.Contains(err.Error(), "columns (qid, attempts) match no known layout") {
		t.Errorf("unmapped: %v", err)
	}
}

type lightevalDoc struct {
	Query     string   `parquet:"query"`
	Choices   []string `parquet:"choices,list"`
	GoldIndex int64    `parquet:"gold_index"`
	ID        string   `parquet:"id"`
	TaskName  string   `parquet:"task_name"`
}
type lightevalResponse struct {
	Input string   `parquet:"input"`
	Text  []string `parquet:"text,list"`
}
type lightevalMetric struct {
	PassAt1 float64 `parquet:"pass@k:k=1&n=2"`
}
type lightevalRow struct {
	Doc           lightevalDoc      `parquet:"doc"`
	ModelResponse lightevalResponse `parquet:"model_response"`
	Metric        lightevalMetric   `parquet:"metric"`
}
type verlMsg struct {
	Role    string `parquet:"role"`
	Content string `parquet:"content"`
}
type verlReward struct {
	Style       string `parquet:"style"`
	GroundTruth string `parquet:"ground_truth"`
}
type verlExtra struct {
	Split string `parquet:"split"`
	Index int64  `parquet:"index"`
}
type verlGenRow struct {
	DataSource  string     `parquet:"data_source"`
	Prompt      []verlMsg  `parquet:"prompt,list"`
	Ability     string     `parquet:"ability"`
	RewardModel verlReward `parquet:"reward_model"`
	ExtraInfo   verlExtra  `parquet:"extra_info"`
	Responses   []string   `parquet:"responses,list"`
}
type trlRow struct {
	Step           int64   `parquet:"step"`
	Prompt         string  `parquet:"prompt"`
	Completion     string  `parquet:"completion"`
	AccuracyReward float64 `parquet:"accuracy_reward"`
	Advantage      float64 `parquet:"advantage"`
}

// Refusals that fixtures in these layouts must produce, each naming where.
func TestToolRefusals(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	batch := toolFile(t, "openai_batch_output.jsonl")
	lines := bytes.Split(bytes.TrimSpace(batch), []byte("\n"))
	failed := []byte(`{"id": "batch_req_x", "custom_id": "own/2", "response": null, "error": {"code": "server_error", "message": "The server had an error"}}`)
	in := bytes.Join([][]byte{lines[0], lines[1], failed}, []byte("\n"))
	_, err := readBytes(t, "batch.jsonl", in, words)
	wantError(t, err, 3, "error", "the request failed")

	// An lm-eval file for another dataset: its first doc's question is in no problem of this one.
	lm := toolFile(t, "lmeval_samples_own_words_2026-01-02T03-04-05.678901.jsonl")
	other := bytes.Replace(lm, []byte(`"question": "A tank holds 120 litres`), []byte(`"question": "A pond holds 120 litres`), 1)
	_, err = readBytes(t, "lm.jsonl", other, words)
	wantError(t, err, 1, "", "its text differs")
	// ... while a doc_id that is not the dataset's position (a reordered or subset task) is matched
	// by the question it carries.
	moved := bytes.ReplaceAll(lm, []byte(`"doc_id": 1,`), []byte(`"doc_id": 0,`))
	if got, err := readBytes(t, "lm.jsonl", moved, words); err != nil || !slices.Equal(got.n, []int{0, 2, 2, 2}) || got.how != "by statement" {
		t.Errorf("reordered doc ids: %v %v %s", got.n, err, got.how)
	}

	// An Inspect sample that errored has no output to count.
	log := toolFile(t, "inspect_own_words.json")
	broken := bytes.Replace(log, []byte(`"error_retries": []`), []byte(`"error": {"message": "RuntimeError: sandbox died", "traceback": ""}, "error_retries": []`), 1)
	_, err = readBytes(t, "bad.json", broken, words)
	var e *Error
	if !errors.As(err, &e) || e.Field != "error" || !strings.Contains(e.Msg, "sandbox died") || e.Record != "samples[0]" {
		t.Errorf("errored sample: %v", err)
	}
	// A loglikelihood (multiple-choice) lm-eval record holds scores, not completions.
	mc := `{"doc_id": 0, "doc": {"question": "q"}, "target": 1, "arguments": {"gen_args_0": {"arg_0": "q", "arg_1": " A"}, "gen_args_1": {"arg_0": "q", "arg_1": " B"}}, "resps": [[["-1.5", "False"]], [["-0.5", "True"]]], "filtered_resps": [["-1.5", "False"], ["-0.5", "True"]], "filter": "none", "acc": 1.0}`
	_, err = readBytes(t, "mc.jsonl", []byte(mc), words)
	wantError(t, err, 1, "resps", "a loglikelihood or multiple-choice task")
}

// TestToolFixturesOwnTheirStrings reads every tool fixture whole and one byte per Read, and checks
// that each sample's strings after the read are what OnSample was given: a key or text that aliases
// a reader's buffer (which the next record overwrites) would have changed. An OpenCompass results
// file once refused itself this way now and then ("problem "2" is repeated").
func TestToolFixturesOwnTheirStrings(t *testing.T) {
	entries, err := os.ReadDir(toolsDir)
	if err != nil {
		t.Fatal(err)
	}
	type texts [5]string
	of := func(s Sample) texts {
		return texts{s.ProblemKey, s.Completion, s.Extracted, s.Reference, s.Prompt}
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, "dataset_") || strings.HasSuffix(name, ".md") { // folders: one model's several files
			continue
		}
		data := toolFile(t, name)
		format, m, err := Sniff(data[:min(len(data), SniffBytes)], name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for how, r := range map[string]io.Reader{"whole": bytes.NewReader(data), "byte at a time": iotest.OneByteReader(bytes.NewReader(data))} {
			var got []Sample
			var given []texts
			err := Read(r, name, format, m, Options{OnSample: func(s Sample) error {
				got = append(got, s)
				given = append(given, of(s)) // compared by value: a later change to the bytes shows
				for i, v := range given[len(given)-1] {
					given[len(given)-1][i] = strings.Clone(v)
				}
				return nil
			}})
			if err != nil {
				t.Fatalf("%s %s: %v", name, how, err)
			}
			if len(got) == 0 {
				t.Fatalf("%s %s: no samples", name, how)
			}
			for i := range got {
				if of(got[i]) != given[i] {
					t.Errorf("%s %s: sample %d changed after it was delivered: %q, was %q", name, how, i, of(got[i]), given[i])
				}
			}
		}
	}
}

package ingest

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tidwall/gjson"
)

// Formats lists every samples format ReadSamples knows, in the order the upload page names them.
var Formats = []Format{FormatReachSample, FormatReachProblem, FormatQwenEval, FormatLMEval, FormatLighteval, FormatInspect,
	FormatOpenCompass, FormatHumanEvalResults, FormatEvalPlusResults, FormatBigCodeBench, FormatVerlValidation, FormatVerlGeneration,
	FormatTRLCompletions, FormatWandbTable, FormatOpenAIBatch, FormatVLLM, FormatHFGenerations, FormatNeMoSkills, FormatEvalscope,
	FormatSkyThought, FormatMathArena, // toolreaders.go
	FormatOpenRLHF, FormatSimpleEvals, FormatLiveCodeBench, FormatDeepSeekMath, // toolreaders2.go
	FormatCountsCSV, FormatParquet, FormatMapped}

// toolName is the tool that writes a format, for pages and run metadata.
func toolName(f Format) string {
	switch f {
	case FormatQwenEval:
		return "Qwen2.5-Math evaluator"
	case FormatReachSample, FormatReachProblem:
		return "Reach"
	case FormatHumanEvalResults:
		return "human-eval / EvalPlus"
	case FormatCountsCSV:
		return "per-problem counts"
	case FormatLMEval:
		return "lm-evaluation-harness"
	case FormatLighteval:
		return "lighteval"
	case FormatInspect:
		return "Inspect AI"
	case FormatOpenCompass:
		return "OpenCompass"
	case FormatEvalPlusResults:
		return "EvalPlus"
	case FormatBigCodeBench:
		return "BigCodeBench"
	case FormatVerlValidation, FormatVerlGeneration:
		return "verl"
	case FormatTRLCompletions:
		return "TRL"
	case FormatWandbTable:
		return "wandb"
	case FormatOpenAIBatch:
		return "OpenAI Batch API"
	case FormatVLLM:
		return "vLLM"
	case FormatHFGenerations:
		return "Hugging Face released generations"
	case FormatNeMoSkills:
		return "NeMo-Skills"
	case FormatEvalscope:
		return "evalscope"
	case FormatSkyThought:
		return "SkyThought"
	case FormatMathArena:
		return "MathArena"
	case FormatParquet:
		return "parquet"
	}
	return toolName2(f)
}

// Describe names a format for people: "lm-evaluation-harness --log_samples".
func Describe(f Format) string {
	switch f {
	case FormatQwenEval:
		return "Qwen2.5-Math / limit-of-RLVR evaluator output"
	case FormatReachSample:
		return "Reach JSONL, one line per sample"
	case FormatReachProblem:
		return "Reach JSONL, one line per problem"
	case FormatHumanEvalResults:
		return "human-eval results / EvalPlus samples"
	case FormatCountsCSV:
		return "per-problem counts CSV"
	case FormatLMEval:
		return "lm-evaluation-harness --log_samples"
	case FormatLighteval:
		return "lighteval details"
	case FormatInspect:
		return "Inspect AI log"
	case FormatOpenCompass:
		return "OpenCompass predictions or results"
	case FormatEvalPlusResults:
		return "EvalPlus eval_results.json"
	case FormatBigCodeBench:
		return "BigCodeBench eval_results.json"
	case FormatVerlValidation:
		return "verl validation generations"
	case FormatVerlGeneration:
		return "verl main_generation output"
	case FormatTRLCompletions:
		return "TRL logged completions"
	case FormatWandbTable:
		return "wandb table (.table.json)"
	case FormatOpenAIBatch:
		return "OpenAI Batch API output"
	case FormatVLLM:
		return "vLLM RequestOutput JSON"
	case FormatHFGenerations:
		return "Hugging Face released generations"
	case FormatNeMoSkills:
		return "NeMo-Skills generation output (output-rs*.jsonl)"
	case FormatEvalscope:
		return "evalscope reviews"
	case FormatSkyThought:
		return "SkyThought results.json"
	case FormatMathArena:
		return "MathArena run file (one problem)"
	case FormatParquet:
		return "parquet (layout read from its columns)"
	case FormatMapped:
		return "custom field mapping"
	}
	if d := describe2(f); d != "" {
		return d
	}
	return string(f)
}

// finishNames maps tools' names for "cut by the token limit" to Reach's "length".
var finishNames = map[string]string{"max_tokens": "length", "model_length": "length", "max_length": "length", "MAX_TOKENS": "length"}

// specFor resolves a format (or a mapping) to its spec.
func specFor(f Format, m *Mapping) (spec, error) {
	reach := [nFields]paths{fCompletion: mustPaths("completion"), fCorrect: mustPaths("correct"), fExtracted: mustPaths("extracted"),
		fIndex: mustPaths("sample_index"), fFinish: mustPaths("finish_reason"), fTokens: mustPaths("completion_tokens")}
	switch f {
	case FormatMapped:
		return mappedSpec(m)
	case FormatReachSample:
		return spec{format: f, id: mustPaths("problem_id"), f: reach}, nil
	case FormatReachProblem:
		return spec{format: f, id: mustPaths("problem_id"), list: mustPaths("completions"), f: reach}, nil
	case FormatQwenEval:
		return spec{format: f, id: mustPaths("idx"), list: mustPaths("code"), question: mustPaths("question"), reference: mustPaths("gt"),
			f: [nFields]paths{fCorrect: mustPaths("score"), fExtracted: mustPaths("pred"), fFinish: mustPaths("finish_reason")}}, nil
	case FormatHumanEvalResults:
		return spec{format: f, id: mustPaths("task_id"), f: [nFields]paths{fCompletion: mustPaths("completion", "solution"),
			fCorrect: mustPaths("passed"), fReason: mustPaths("result")}}, nil
	case FormatLMEval:
		return spec{format: f, id: mustPaths("doc_id"), idKind: KeyIndex0, list: mustPaths("resps"),
			question: mustPaths("doc.problem", "doc.question", "doc.Question"), prompt: mustPaths("arguments.gen_args_0.arg_0"),
			reference: mustPaths("target"), hook: lmevalRecord, meta: lmevalMeta}, nil
	case FormatLighteval:
		return spec{format: f, id: mustPaths("doc.id"), idOptional: true, list: mustPaths("model_response.text", "predictions"),
			prompt: mustPaths("doc.query", "full_prompt", "example"), reference: mustPaths("gold.0", "gold"),
			f: [nFields]paths{fExtracted: mustPaths("$.specifics.extracted_predictions")}, meta: lightevalMeta}, nil
	case FormatVerlValidation:
		return spec{format: f, prompt: mustPaths("input", "prompt"), reference: mustPaths("gts", "ground_truth"),
			f:    [nFields]paths{fCompletion: mustPaths("output", "response"), fCorrect: mustPaths("acc", "score"), fExtracted: mustPaths("pred")},
			step: mustPaths("step"),
			meta: func(sr *sampleReader, top []kv, rec string) { setMeta(sr, top, rec, "step", "step") }}, nil
	case FormatVerlGeneration:
		return spec{format: f, prompt: mustPaths("prompt.#.content", "prompt"), list: mustPaths("responses"),
			reference: mustPaths("reward_model.ground_truth", "extra_info.answer")}, nil
	case FormatTRLCompletions:
		return spec{format: f, prompt: mustPaths("prompt.#.content", "prompt"),
			f:    [nFields]paths{fCompletion: mustPaths("completion.#.content", "completion")},
			step: mustPaths("step"),
			meta: func(sr *sampleReader, top []kv, rec string) { setMeta(sr, top, rec, "step", "step") }}, nil
	case FormatOpenAIBatch:
		return spec{format: f, id: mustPaths("custom_id"), list: mustPaths("response.body.choices"),
			f:    [nFields]paths{fCompletion: mustPaths("message.content", "text"), fIndex: mustPaths("@.index"), fFinish: mustPaths("@.finish_reason")},
			hook: batchRecord, meta: batchMeta}, nil
	case FormatVLLM:
		return spec{format: f, id: mustPaths("request_id"), idOptional: true, prompt: mustPaths("prompt"), list: mustPaths("outputs"),
			f: [nFields]paths{fCompletion: mustPaths("text"), fIndex: mustPaths("@.index"), fFinish: mustPaths("@.finish_reason"),
				fTokens: mustPaths("@.token_ids.#")}}, nil
	case FormatHFGenerations:
		return spec{format: f, id: mustPaths("uuid"), idKind: KeyID, idOptional: true, question: mustPaths("problem", "question"),
			reference: mustPaths("answer"), list: mustPaths("generations"),
			f: [nFields]paths{fCorrect: mustPaths("$.correctness_math_verify", "$.correctness", "$.correctness_llama"),
				fFinish: mustPaths("$.finish_reasons")}}, nil
	case FormatInspect:
		return spec{format: f, doc: readInspectJSON}, nil
	case FormatOpenCompass:
		return spec{format: f, doc: readOpenCompass}, nil
	case FormatWandbTable:
		return spec{format: f, doc: readWandbTable}, nil
	case FormatEvalPlusResults, FormatBigCodeBench:
		return spec{format: f, doc: readEvalPlusResults}, nil
	case FormatNeMoSkills:
		return spec{format: f, hook: nemoSkillsHook, end: func(sr *sampleReader) error { return sr.gate.check(sr, true) }}, nil
	case FormatEvalscope:
		return spec{format: f, hook: evalscopeHook, end: evalscopeEnd}, nil
	case FormatSkyThought:
		return spec{format: f, doc: readSkyThought}, nil
	case FormatMathArena:
		return spec{format: f, doc: readMathArena}, nil
	case FormatParquet:
		return spec{}, fmt.Errorf("format %s: the file is not parquet", f)
	}
	if s, ok := spec2(f); ok {
		return s, nil
	}
	return spec{}, fmt.Errorf("unknown format %q", f)
}

// setMeta copies a record's top-level field into the run's settings.
func setMeta(sr *sampleReader, top []kv, rec, field, name string) {
	for _, f := range top {
		if f.key == field && kindOf(f.val) != "object" && kindOf(f.val) != "list" {
			sr.meta.set(name, strings.Trim(f.val, `"`))
		}
	}
}

// lmevalRecord takes each document's completions once: lm-eval writes a document once per filter
// (same resps, different filtered_resps); later filters are skipped, a repeat within one filter is
// refused by emit. It also refuses a loglikelihood (multiple-choice) record, which holds scores,
// not completions, and flattens resps (one list of completions per request).
func lmevalRecord(sr *sampleReader, w where, top []kv, rec string) (bool, error) {
	doc := strings.Clone(gjson.Get(rec, "doc_id").Raw) // kept beyond the record, whose buffer is reused
	filter := strings.Clone(gjson.Get(rec, "filter").String())
	if sr.seen == nil {
		sr.seen = map[string]string{}
	}
	if first, ok := sr.seen[doc]; ok && first != filter {
		return true, nil
	} else if !ok {
		sr.seen[doc] = filter
	}
	// Check the shape on the raw text: gjson's Array would unescape every completion, twice the work.
	var resps string
	for _, f := range top {
		if f.key == "resps" {
			resps = f.val
		}
	}
	if k := kindOf(resps); k != "list" {
		return false, w.errorf("resps", "want a list of completions per request, got %s", k)
	}
	var reqs []string
	_ = scanArray(resps, func(_ int, v string) error { reqs = append(reqs, v); return nil })
	if len(reqs) != 1 || kindOf(reqs[0]) != "list" {
		return false, w.errorf("resps", "holds %d requests for one document: a loglikelihood or multiple-choice task, not generations (Reach reads generate_until tasks)", len(reqs))
	}
	err := scanArray(reqs[0], func(i int, v string) error {
		if k := kindOf(v); k != "string" {
			return w.errorf(fmt.Sprintf("resps[0][%d]", i), "want a completion (string), got %s", k)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	// Point the list at the request's completions.
	for i := range top {
		if top[i].key == "resps" {
			top[i].val = reqs[0]
		}
	}
	return false, nil
}

var lmevalFile = regexp.MustCompile(`(?:^|_)samples_(.+)_(\d{4}-\d{2}-\d{2}T[0-9-]+(?:\.\d+)?)\.jsonl`)

func lmevalMeta(sr *sampleReader, top []kv, rec string) {
	if sr.meta.Task == "" {
		if m := lmevalFile.FindStringSubmatch(filepath.Base(sr.file)); m != nil {
			sr.meta.Task, sr.meta.Date = m[1], m[2]
		}
	}
	gjson.Get(rec, "arguments.gen_args_0.arg_1").ForEach(func(k, v gjson.Result) bool {
		sr.meta.set(k.String(), compactJSON(v))
		return true
	})
}

func lightevalMeta(sr *sampleReader, top []kv, rec string) {
	setOnce(&sr.meta.Task, gjson.Get(rec, "doc.task_name").String())
}

// batchRecord refuses a failed request: its samples are missing, so the problem's n would be short.
func batchRecord(sr *sampleReader, w where, top []kv, rec string) (bool, error) {
	if e := gjson.Get(rec, "error"); e.Exists() && e.Type != gjson.Null {
		return false, w.errorf("error", "the request failed: %.200s (its samples are missing; retry the request or leave the line out)", compactJSON(e))
	}
	if code := gjson.Get(rec, "response.status_code"); code.Exists() && code.Int() != 200 {
		return false, w.errorf("response.status_code", "the request failed with status %d: %.200s", code.Int(), compactJSON(gjson.Get(rec, "response.body.error")))
	}
	return false, nil
}

func batchMeta(sr *sampleReader, top []kv, rec string) {
	if sr.meta.Model == "" {
		setOnce(&sr.meta.Model, gjson.Get(rec, "response.body.model").String())
		sr.meta.set("created", gjson.Get(rec, "response.body.created").String())
	}
}

// compactJSON renders a value as text: strings as themselves, anything else as compact JSON.
func compactJSON(v gjson.Result) string {
	if v.Type == gjson.String {
		return strings.Clone(v.Str)
	}
	var b strings.Builder
	for _, line := range strings.Split(v.Raw, "\n") {
		b.WriteString(strings.TrimSpace(line))
	}
	return b.String()
}

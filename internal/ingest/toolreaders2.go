package ingest

import (
	"fmt"
	"html"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Readers for OpenRLHF, simple-evals, LiveCodeBench and DeepSeek-Math (issue 21), each built from the
// code that writes its file (testdata/tools/README.md names repository, path and commit).

const (
	// FormatOpenRLHF: OpenRLHF batch_inference.py output, JSONL of {"input", "output"} (generate and
	// generate_vllm; best_of_n copies of each prompt) or {"input", "output", "reward"} (rm: a reward
	// model's score, not a verdict). No id: matched by the statement in the prompt.
	FormatOpenRLHF Format = "openrlhf-batch"
	// FormatSimpleEvals: simple-evals <eval>_<model>_<date>_allresults.json: {"score", "metrics",
	// "htmls", "convos", "metadata"}, one convo (prompt messages and the sampled assistant
	// messages) and one html (with the sample's score) per example.
	FormatSimpleEvals Format = "simple-evals"
	// FormatLiveCodeBench: LiveCodeBench code generation output and eval_all.json, a JSON list of
	// problems: question_id, question_content, output_list, code_list, graded_list?, metadata?.
	FormatLiveCodeBench Format = "livecodebench"
	// FormatDeepSeekMath: DeepSeek-Math evaluation predictions*.json, a JSON list of the task's rows
	// (messages, answer) with prompt, model_output, prediction (or program_output) and accuracy.
	FormatDeepSeekMath Format = "deepseek-math"
)

func toolName2(f Format) string {
	switch f {
	case FormatOpenRLHF:
		return "OpenRLHF"
	case FormatSimpleEvals:
		return "simple-evals"
	case FormatLiveCodeBench:
		return "LiveCodeBench"
	case FormatDeepSeekMath:
		return "DeepSeek-Math evaluation"
	}
	return ""
}

func describe2(f Format) string {
	switch f {
	case FormatOpenRLHF:
		return "OpenRLHF batch inference output"
	case FormatSimpleEvals:
		return "simple-evals _allresults.json"
	case FormatLiveCodeBench:
		return "LiveCodeBench eval_all.json (or generation output)"
	case FormatDeepSeekMath:
		return "DeepSeek-Math evaluation predictions.json"
	}
	return ""
}

// spec2 resolves this file's formats.
func spec2(f Format) (spec, bool) {
	switch f {
	case FormatOpenRLHF:
		// The rm task's reward is a reward model's score (normalised, unbounded): no verdict, so it
		// is left out and Reach grades the outputs.
		return spec{format: f, prompt: mustPaths("input"), f: [nFields]paths{fCompletion: mustPaths("output")}, meta: openRLHFMeta}, true
	case FormatLiveCodeBench:
		// output_list is the model's text, code_list the code LiveCodeBench extracted and ran,
		// graded_list its verdicts, metadata one JSON text per sample (error_message, ...).
		return spec{format: f, id: mustPaths("question_id"), idKind: KeyID, question: mustPaths("question_content"),
			list: mustPaths("output_list"), f: [nFields]paths{fExtracted: mustPaths("$.code_list"), fCorrect: mustPaths("$.graded_list"),
				fReason: mustPaths("$.metadata")}, meta: lcbMeta}, true
	case FormatDeepSeekMath:
		// The rows' ids are "<src>-test-<i>-<j>", positions in the task's own copy of the dataset,
		// not the dataset's ids: the prompt (the question with the markup) names the problem.
		return spec{format: f, prompt: mustPaths("prompt", "messages.0.content"), reference: mustPaths("answer"),
			f: [nFields]paths{fCompletion: mustPaths("model_output"), fCorrect: mustPaths("accuracy"),
				fExtracted: mustPaths("prediction", "program_output")}, meta: deepSeekMeta}, true
	case FormatSimpleEvals:
		return spec{format: f, doc: readSimpleEvals}, true
	}
	return spec{}, false
}

func openRLHFMeta(sr *sampleReader, top []kv, rec string) {
	if gjson.Get(rec, "reward").Exists() {
		sr.meta.set("reward", "a reward model's score per sample (batch_inference --eval_task rm): not a verdict, not imported")
	}
}

func lcbMeta(sr *sampleReader, top []kv, rec string) {
	setMeta(sr, top, rec, "platform", "platform")
}

func deepSeekMeta(sr *sampleReader, top []kv, rec string) {
	setOnce(&sr.meta.Task, gjson.Get(rec, "dataset").String())
}

// layoutRules2 recognise this file's layouts; they are appended to layoutRules.
var layoutRules2 = []layoutRule{
	{FormatSimpleEvals, func(top *shape) bool { return top.is("convos", "list") && top.is("htmls", "list") }},
	{FormatLiveCodeBench, func(top *shape) bool {
		return top.is("question_id") && top.is("output_list", "list") && top.is("code_list", "list")
	}},
	{FormatDeepSeekMath, func(top *shape) bool {
		return top.is("model_output", "string", "null") && top.is("messages", "list") && top.any("accuracy", "prediction", "program_output")
	}},
	{FormatOpenRLHF, func(top *shape) bool {
		for _, k := range top.keys {
			if k != "input" && k != "output" && k != "reward" {
				return false
			}
		}
		return top.is("input", "string") && top.is("output", "string")
	}},
}

func init() { layoutRules = append(layoutRules, layoutRules2...) }

// notSamples2 names files these tools write beside their samples that hold none: a summary of
// numbers only (simple-evals' <eval>_<model>_<date>.json, DeepSeek-Math's metrics.json, ...), and
// OpenRLHF's iterative-DPO pairs. "" for anything else.
func notSamples2(top *shape) string {
	if top.is("chosen") && top.is("rejected") && top.is("prompt") {
		return "preference pairs (prompt, chosen, rejected: OpenRLHF's iter_dpo post-processing keeps 2 of each prompt's samples), not a model's samples: give the batch inference output from --eval_task generate_vllm (or rm) without --post_processor"
	}
	if !top.doc || top.cut || len(top.keys) == 0 { // a JSONL line of numbers is refused as such elsewhere
		return ""
	}
	for _, k := range top.keys {
		if top.kind[k] != "number" && top.kind[k] != "null" {
			return ""
		}
	}
	return fmt.Sprintf("a summary of numbers only (%s), not per-sample output: give the samples file beside it (simple-evals: <eval>_<model>_<date>_allresults.json; DeepSeek-Math: predictions.json, or the folders' */predictions*.json for repeats)",
		strings.Join(top.keys[:min(len(top.keys), 6)], ", "))
}

// simple-evals renders each example's html with common.HTML_JINJA (autoescaped): the results are
// three paragraphs, the score last.
var (
	seScore     = regexp.MustCompile(`<p>Score: ([^<]*)</p>`)
	seExtracted = regexp.MustCompile(`(?s)<p>Extracted Answer: (.*?)</p>`)
	seCorrect   = regexp.MustCompile(`(?s)<p>Correct Answer: (.*?)</p>`)
)

// seResult is what one example's html says: its score, and the extracted and correct answers.
type seResult struct {
	ok                  bool // the html had a Score paragraph
	score               string
	extracted, expected string
}

// readSimpleEvals reads an _allresults.json. simple_evals.py writes the keys in the order score,
// metrics, htmls, convos, metadata: each html's results are kept (a few short strings per
// example) and paired with the convo of the same index. A file whose convos come first (re-dumped
// with sorted keys) is read without the file's scores.
func readSimpleEvals(sr *sampleReader, r io.Reader) error {
	d := newDocScanner(r, sr.file, sr.o.Limits)
	var results []seResult
	sawConvos := false
	err := d.object(func(key string) error {
		switch key {
		case "score":
			v, err := d.value(1 << 10)
			sr.meta.set("score", string(v))
			return err
		case "htmls":
			return d.array(func(i int) error {
				raw, _, err := d.record()
				if err != nil {
					return err
				}
				results = append(results, parseSimpleEvalsHTML(gjson.ParseBytes(raw).String()))
				return nil
			})
		case "convos":
			sawConvos = true
			if results == nil {
				sr.meta.set("scores", "not read: the file's convos come before its htmls")
			}
			return d.array(func(i int) error {
				raw, line, err := d.record()
				if err != nil {
					return err
				}
				w := where{file: sr.file, line: line, record: fmt.Sprintf("convos[%d]", i)}
				var res seResult
				if i < len(results) {
					res = results[i]
				}
				return sr.simpleEvalsConvo(w, gjson.ParseBytes(raw), res)
			})
		}
		return d.skip()
	})
	if err != nil {
		return err
	}
	if !sawConvos {
		return &Error{File: sr.file, Msg: `not a simple-evals _allresults.json: no "convos" list`}
	}
	return d.end()
}

func parseSimpleEvalsHTML(h string) seResult {
	var r seResult
	if m := seScore.FindAllStringSubmatch(h, -1); m != nil {
		r.ok, r.score = true, strings.TrimSpace(html.UnescapeString(m[len(m)-1][1]))
	}
	if m := seExtracted.FindAllStringSubmatch(h, -1); m != nil {
		r.extracted = strings.TrimSpace(html.UnescapeString(m[len(m)-1][1]))
	}
	if m := seCorrect.FindAllStringSubmatch(h, -1); m != nil {
		r.expected = strings.TrimSpace(html.UnescapeString(m[len(m)-1][1]))
	}
	return r
}

// simpleEvalsConvo reads one convo: the messages up to the last non-assistant one are the prompt,
// the assistant messages after it the samples (HumanEval puts num_samples_per_task there).
func (sr *sampleReader) simpleEvalsConvo(w where, convo gjson.Result, res seResult) error {
	if !convo.IsArray() {
		return w.errorf("", "want a list of messages (role, content), got %s", kindOf(convo.Raw))
	}
	msgs := convo.Array()
	last := -1
	for i, m := range msgs {
		if m.Get("role").String() != "assistant" {
			last = i
		}
	}
	var prompt []string
	for _, m := range msgs[:last+1] {
		if m.Get("role").String() != "system" && m.Get("role").String() != "developer" {
			prompt = append(prompt, inspectText(m.Get("content")))
		}
	}
	outs := msgs[last+1:]
	if len(outs) == 0 {
		return w.errorf(fmt.Sprintf("[%d]", len(msgs)-1), "no assistant message after the prompt: the example has no sampled answer (read as %s)", Describe(FormatSimpleEvals))
	}
	verdicts, err := simpleEvalsVerdicts(w, res, len(outs))
	if err != nil {
		return err
	}
	for j, m := range outs {
		c := m.Get("content")
		if c.Type != gjson.String && !c.IsArray() {
			return w.errorf(fmt.Sprintf("[%d].content", last+1+j), "want the sampled answer (text), got %s (read as %s)", kindOf(c.Raw), Describe(FormatSimpleEvals))
		}
		p := pending{Sample: Sample{Completion: inspectText(c), Correct: verdicts[j]}, has: 1 << fCompletion}
		if len(outs) == 1 && res.extracted != "" && res.extracted != "None" {
			p.Extracted = res.extracted
		}
		p.perLine = len(outs) > 1
		sr.pend = append(sr.pend, p)
	}
	rc := recordCtx{prompt: strings.Join(prompt, "\n"), kind: KeyNone}
	if len(outs) == 1 && res.expected != "" {
		rc.reference = res.expected
	}
	return sr.emit(w, rc)
}

// simpleEvalsVerdicts reads an example's verdicts from its html: one sample with the score 1 or 0
// (a fractional score, a rubric's, is none); several with the extracted answer HumanEval renders,
// the list of their results ([True, False, ...]).
func simpleEvalsVerdicts(w where, res seResult, n int) ([]*bool, error) {
	out := make([]*bool, n)
	if !res.ok {
		return out, nil
	}
	if n == 1 {
		f, err := strconv.ParseFloat(res.score, 64)
		if err == nil && (f == 0 || f == 1) {
			v := f == 1
			out[0] = &v
		}
		return out, nil
	}
	list := strings.TrimSpace(res.extracted)
	if !strings.HasPrefix(list, "[") || !strings.HasSuffix(list, "]") {
		return out, nil
	}
	parts := strings.Split(strings.Trim(list, "[]"), ",")
	if len(parts) != n {
		return out, nil
	}
	for j, p := range parts {
		var v bool
		switch strings.TrimSpace(p) {
		case "True", "1":
			v = true
		case "False", "0":
		default:
			return make([]*bool, n), nil
		}
		out[j] = &v
	}
	return out, nil
}

// emptyCompletions counts samples whose completion field is there but holds no text: a layout read
// from the wrong field, or a run whose generations failed, would otherwise be graded as wrong
// answers and give a plausible 0 %.
type emptyCompletions struct {
	n     int
	first where
}

func (e *emptyCompletions) note(w where, p *pending) {
	if p.has&(1<<fCompletion) == 0 || strings.TrimSpace(p.Completion) != "" {
		return
	}
	if e.n == 0 {
		e.first = w
	}
	e.n++
}

// checkEmpty refuses a file whose completions are mostly empty, and warns of a few.
func (sr *sampleReader) checkEmpty() error {
	e := sr.empty
	if e.n == 0 {
		return nil
	}
	field := "completion"
	if len(sr.f[fCompletion]) > 0 {
		field = sr.f[fCompletion].String()
	} else if len(sr.list) > 0 {
		field = sr.list.String()
	}
	if e.n*2 > sr.n {
		return e.first.errorf(field, "%d of %d samples have an empty completion (read as %s), the first here: that field holds no model output; give the file with the model's generations, or map the field that holds them (--map completion=FIELD)",
			e.n, sr.n, Describe(sr.format))
	}
	if sr.o.OnWarning != nil {
		sr.o.OnWarning(Warning{Code: "empty-completion", Err: *e.first.errorf(field, "%d of %d samples have an empty completion (graded as wrong), the first here", e.n, sr.n)})
	}
	return nil
}

package ingest

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Readers for four evaluation tools' sample files, each built from the code that writes them
// (testdata/tools/README.md names repository, path and commit):
//
//   - NeMo-Skills generation output, output-rs<seed>.jsonl (one file per seed) or output.jsonl:
//     each line the dataset row plus generation, num_generated_tokens, finish_reason?, and after
//     evaluation predicted_answer and symbolic_correct (math) or judgement (LLM judge); with
//     parse_reasoning, _full_generation holds the whole output and generation the part after
//     the thinking (empty when the thinking did not end).
//   - evalscope reviews, reviews/<model>/<dataset>_<subset>.jsonl: one line per sample {index,
//     input or messages, target, sample_score: {score: {value: {metric: v}, main_score_name,
//     prediction, extracted_prediction}, group_id, generation_index?}}; before v1.0 one line per
//     problem {raw_input, choices: [{message: {content}, review: {pred, result}}]}.
//   - SkyThought results.json: {problem_key: {dataset row..., responses: [{content, correctness,
//     reason}], token_usages: [{completion_tokens}]}}; the first releases kept responses and
//     token_usages keyed by temperature.
//   - MathArena runs, outputs/<competition>/<model>/<problem_idx>.json(.zst): one problem per
//     file {idx, problem, gold_answer, answers, correct, messages: one conversation per run,
//     detailed_costs: [{output_tokens}]}.

// door watches what a reader takes as completions: a layout whose completion field is empty on
// every sample (or holds another field's text) would otherwise import as plausible numbers.
type door struct {
	field         string // the completion's field, as the layout names it
	n, blank, dup int
	blankAt       where
	dupAt         where
	dupOf         string
}

// watch notes one completion; others are the record's texts it must not be (the reference
// answer, the extracted answer), by name.
func (d *door) watch(w where, completion string, others ...[2]string) {
	d.n++
	c := strings.TrimSpace(completion)
	if c == "" {
		if d.blank == 0 {
			d.blankAt = w
		}
		d.blank++
		return
	}
	for _, o := range others {
		if o[1] != "" && c == strings.TrimSpace(o[1]) {
			if d.dup == 0 {
				d.dupAt, d.dupOf = w, o[0]
			}
			d.dup++
			return
		}
	}
}

// check refuses a file whose completions are all empty (refuse: a layout with many problems per
// file), and warns when most are empty or are another field's text (a model may answer with the
// bare answer, so that is no proof).
func (d *door) check(sr *sampleReader, refuse bool) error {
	how := Describe(sr.format)
	if refuse && d.n > 0 && d.blank == d.n {
		return d.blankAt.errorf(d.field, "every completion is empty (%d samples; read as %s): the file holds no model output to count; give the file the tool wrote after generation", d.n, how)
	}
	warn := func(code, msg string, at where) {
		if sr.o.OnWarning != nil {
			sr.o.OnWarning(Warning{Code: code, Err: *at.errorf(d.field, "%s", msg)})
		}
	}
	if d.blank*2 > d.n {
		warn("blank-completions", fmt.Sprintf("%d of %d completions are empty (read as %s): their verdicts say nothing about the model's output", d.blank, d.n, how), d.blankAt)
	}
	if d.dup*2 > d.n {
		warn("completion-is-another-field", fmt.Sprintf("%d of %d completions are the sample's %s (read as %s): check that %s holds the model's output", d.dup, d.n, d.dupOf, how, d.field), d.dupAt)
	}
	return nil
}

// str returns a JSON value's text: a string as itself, a number as written, "" otherwise.
func str(v gjson.Result) string {
	switch v.Type {
	case gjson.String:
		return strings.Clone(v.Str)
	case gjson.Number:
		return normNumber(v.Raw)
	}
	return ""
}

// firstOf returns the first of the named fields of e that exists and is not null, and its name.
func firstOf(e gjson.Result, names ...string) (gjson.Result, string) {
	for _, n := range names {
		if v := e.Get(escapeKey(n)); v.Exists() && v.Type != gjson.Null {
			return v, n
		}
	}
	return gjson.Result{}, ""
}

// tokens reads a token count; a negative one (Megatron's -1) is unknown.
func tokens(w where, field string, v gjson.Result) (int, error) {
	if !v.Exists() || v.Type == gjson.Null || (v.Type == gjson.Number && v.Num < 0) {
		return 0, nil
	}
	return w.count(field, v.Raw)
}

// textKey sets a record's problem from its text, else from an id, else from its position (index,
// when known: >= 0).
func textKey(rc *recordCtx, question, prompt string, id gjson.Result, idField string, index int) {
	rc.question, rc.prompt = question, prompt
	switch {
	case informative(question) || informative(prompt):
		rc.kind = KeyNone
	case id.Exists() && (id.Type == gjson.String || id.Type == gjson.Number):
		rc.key, rc.kind, rc.idField = str(id), KeyAuto, idField
	case index < 0: // no id nor text, and the position is not known: the Matcher refuses it
		rc.kind = KeyNone
	default:
		rc.key, rc.kind = strconv.Itoa(index), KeyRecord
	}
}

// ---- NeMo-Skills ----

// nemoSkillsHook reads one line as a sample; the line is not read on through the spec's paths.
// Lines are read one by one (and a big file in parts), so the record's index is not known here.
func nemoSkillsHook(sr *sampleReader, w where, _ []kv, rec string) (bool, error) {
	sr.gate.field = "generation"
	return true, sr.nemoSkillsLine(w, gjson.Parse(rec), &sr.gate)
}

func (sr *sampleReader) nemoSkillsLine(w where, e gjson.Result, d *door) error {
	gen := e.Get("generation")
	if gen.Type != gjson.String {
		return w.errorf("generation", "want the model's generation (a string), got %s (read as %s: each line the input row plus generation; a file written with another generation_key needs --map completion=FIELD)",
			kindOf(gen.Raw), Describe(FormatNeMoSkills))
	}
	var p pending
	p.Completion = strings.Clone(gen.Str)
	if full := e.Get("_full_generation"); strings.TrimSpace(p.Completion) == "" && full.Type == gjson.String && strings.TrimSpace(full.Str) != "" {
		// parse_reasoning left generation empty: the thinking did not end. The whole output is
		// still the model's; NeMo-Skills graded the empty part.
		p.Completion, p.Reason = strings.Clone(full.Str), "the thinking did not end (generation empty after parse_reasoning); read _full_generation"
	}
	if err := nemoVerdict(w, e, &p); err != nil {
		return err
	}
	if x := e.Get("predicted_answer"); x.Exists() && x.Type != gjson.Null {
		p.Extracted = str(x)
	}
	var err error
	if p.CompletionTokens, err = tokens(w, "num_generated_tokens", e.Get("num_generated_tokens")); err != nil {
		return err
	}
	if f := e.Get("finish_reason"); f.Type == gjson.String {
		p.FinishReason = strings.Clone(f.Str)
		if to, ok := finishNames[p.FinishReason]; ok {
			p.FinishReason = to
		}
	}
	ref, _ := firstOf(e, "expected_answer")
	q, _ := firstOf(e, "problem", "question")
	var prompt string
	if m := e.Get("messages"); m.IsArray() { // prompt_format=openai: the row is a chat
		prompt = inspectText(m)
	}
	var rc recordCtx
	id, idField := firstOf(e, "unique_id", "id", "task_id")
	textKey(&rc, str(q), prompt, id, idField, -1)
	rc.reference = str(ref)
	d.watch(w, p.Completion, [2]string{"expected_answer", rc.reference}, [2]string{"predicted_answer", p.Extracted})
	sr.pend = append(sr.pend, p)
	return sr.emit(w, rc)
}

// nemoVerdict takes the symbolic check (math), else the code checks (EvalPlus base+plus, then
// base), else the LLM judge's "Judgement: Yes/No", as NeMo-Skills' metrics read them; the judge's
// text is kept as the reason when both are there.
func nemoVerdict(w where, e gjson.Result, p *pending) error {
	v, field := firstOf(e, "symbolic_correct", "is_correct-plus", "is_correct")
	if field != "" {
		ok, err := w.verdict(field, v.Raw, 0)
		if err != nil {
			return err
		}
		p.Correct = ok
	}
	j := e.Get("judgement")
	if j.Type != gjson.String {
		return nil
	}
	verdict, said := judgeSays(j.Str)
	if p.Correct == nil {
		p.Correct = &verdict
	}
	if !said {
		p.Reason = "the judgement has no \"Judgement: Yes/No\" (NeMo-Skills counts it as wrong)"
	} else if p.Reason == "" && field != "" {
		p.Reason = "judge: no"
		if verdict {
			p.Reason = "judge: yes"
		}
	}
	return nil
}

// judgeSays reads NeMo-Skills' judge output: the text after the last "Judgement:" starting with
// yes or no; anything else is wrong (said false).
func judgeSays(s string) (verdict, said bool) {
	i := strings.LastIndex(s, "Judgement:")
	if i < 0 {
		return false, false
	}
	rest := strings.ToLower(strings.TrimSpace(s[i+len("Judgement:"):]))
	switch {
	case strings.HasPrefix(rest, "yes"):
		return true, true
	case strings.HasPrefix(rest, "no"):
		return false, true
	}
	return false, false
}

// ---- evalscope ----

func evalscopeHook(sr *sampleReader, w where, _ []kv, rec string) (bool, error) {
	e := gjson.Parse(rec)
	if e.Get("sample_score").Exists() {
		sr.gate.field = "sample_score.score.prediction"
		return true, sr.evalscopeReview(w, e, &sr.gate)
	}
	if e.Get("choices").IsArray() {
		sr.gate.field = "choices[].message.content"
		return true, sr.evalscopeOldReview(w, e, &sr.gate)
	}
	return true, w.errorf("sample_score", "a line without sample_score (v1.0 and later) or choices (before v1.0) (read as %s): give the file under reviews/<model>/", Describe(FormatEvalscope))
}

// evalscopeEnd names the run's task after the file (<dataset>_<subset>.jsonl) and checks the door.
func evalscopeEnd(sr *sampleReader) error {
	setOnce(&sr.meta.Task, strings.TrimSuffix(baseName(sr.file), ".jsonl"))
	return sr.gate.check(sr, true)
}

func baseName(file string) string {
	if i := strings.LastIndexAny(file, `/\`); i >= 0 {
		return file[i+1:]
	}
	return file
}

// evalscopeReview reads one v1.0+ review line: one sample.
func (sr *sampleReader) evalscopeReview(w where, e gjson.Result, d *door) error {
	score := e.Get("sample_score.score")
	if !score.IsObject() {
		return w.errorf("sample_score.score", "want the sample's score (an object), got %s (read as %s)", kindOf(score.Raw), Describe(FormatEvalscope))
	}
	var p pending
	pred := score.Get("prediction")
	switch {
	case pred.Type == gjson.String:
		p.Completion = strings.Clone(pred.Str)
	case e.Get("messages").IsArray():
		p.Completion = lastAssistantText(e.Get("messages"))
	default:
		return w.errorf("sample_score.score.prediction", "missing completion: no prediction and no assistant message (read as %s)", Describe(FormatEvalscope))
	}
	p.Extracted = str(score.Get("extracted_prediction"))
	if err := evalscopeVerdict(w, score, &p); err != nil {
		return err
	}
	if g := e.Get("sample_score.generation_index"); g.Type == gjson.Number {
		i, err := w.count("sample_score.generation_index", g.Raw)
		if err != nil {
			return err
		}
		p.SampleIndex, p.indexed, p.idxField = i, true, func() string { return "sample_score.generation_index" }
	}
	prompt := ""
	if in := e.Get("input"); in.Type == gjson.String {
		prompt = strings.Clone(in.Str)
	} else if m := e.Get("messages"); m.IsArray() {
		prompt = userText(m)
	}
	var rc recordCtx
	// index and group_id count within one subset's file, and each subset starts at 0: not the
	// dataset's positions. The prompt names the problem.
	textKey(&rc, "", prompt, gjson.Result{}, "", -1)
	rc.reference = str(e.Get("target"))
	d.watch(w, p.Completion, [2]string{"target", rc.reference}) // extracted_prediction is the whole output where a benchmark has no filter
	sr.pend = append(sr.pend, p)
	return sr.emit(w, rc)
}

// evalscopeVerdict reads the score's main value (main_score_name, else the first): 1/0 or a bool.
// A score whose status is not usable has no value: no verdict.
func evalscopeVerdict(w where, score gjson.Result, p *pending) error {
	value := score.Get("value")
	name := score.Get("main_score_name").String()
	var v gjson.Result
	field := ""
	if name != "" && value.Get(escapeKey(name)).Exists() {
		v, field = value.Get(escapeKey(name)), "sample_score.score.value."+name
	} else {
		value.ForEach(func(k, val gjson.Result) bool {
			v, field = val, "sample_score.score.value."+k.String()
			return false
		})
	}
	if field == "" {
		if st := score.Get("status").String(); st != "" {
			p.Reason = "score status: " + st
		}
		return nil
	}
	ok, err := w.verdict(field, v.Raw, 0)
	if err != nil {
		return err
	}
	p.Correct = ok
	return nil
}

// evalscopeOldReview reads a review line of the releases before v1.0: one problem, its samples in
// choices.
func (sr *sampleReader) evalscopeOldReview(w where, e gjson.Result, d *door) error {
	raw := e.Get("raw_input")
	q, _ := firstOf(raw, "problem", "question", "query")
	var rc recordCtx
	textKey(&rc, str(q), "", e.Get("index"), "index", -1)
	ref, _ := firstOf(raw, "answer", "solution")
	rc.reference = str(ref)
	for i, c := range e.Get("choices").Array() {
		content := c.Get("message.content")
		field := fmt.Sprintf("choices[%d].message.content", i)
		if content.Type != gjson.String {
			return w.errorf(field, "want the model's output (a string), got %s (read as %s)", kindOf(content.Raw), Describe(FormatEvalscope))
		}
		p := pending{Sample: Sample{Completion: strings.Clone(content.Str)}}
		if res := c.Get("review.result"); res.Exists() {
			ok, err := w.verdict(fmt.Sprintf("choices[%d].review.result", i), res.Raw, 0)
			if err != nil {
				return err
			}
			p.Correct = ok
		}
		p.Extracted = str(c.Get("review.pred"))
		p.perLine = true
		d.watch(w, p.Completion, [2]string{"reference", rc.reference})
		sr.pend = append(sr.pend, p)
	}
	sr.list = mustPaths("choices") // one record per problem: a repeated problem is refused
	err := sr.emit(w, rc)
	sr.list = nil
	return err
}

// lastAssistantText is the text (no reasoning parts) of a chat's last assistant message.
func lastAssistantText(msgs gjson.Result) string {
	out := ""
	msgs.ForEach(func(_, m gjson.Result) bool {
		if m.Get("role").String() == "assistant" {
			out = inspectText(m.Get("content"))
		}
		return true
	})
	return out
}

// userText joins the texts of a chat's user messages.
func userText(msgs gjson.Result) string {
	var parts []string
	msgs.ForEach(func(_, m gjson.Result) bool {
		if m.Get("role").String() == "user" {
			parts = append(parts, inspectText(m.Get("content")))
		}
		return true
	})
	return strings.Join(parts, "\n")
}

// ---- SkyThought ----

func readSkyThought(sr *sampleReader, r io.Reader) error {
	d := door{field: "responses[].content"}
	ds := newDocScanner(r, sr.file, sr.o.Limits)
	n := 0
	err := ds.object(func(key string) error {
		raw, line, err := ds.record()
		if err != nil {
			return err
		}
		w := where{file: sr.file, line: line, record: strconv.Quote(key)}
		if err := checkJSON(w, raw, sr.o.Limits); err != nil {
			return err
		}
		n++
		return sr.skyThoughtRecord(w, key, n-1, gjson.ParseBytes(raw), &d)
	})
	if err != nil {
		return err
	}
	if err := ds.end(); err != nil {
		return err
	}
	return d.check(sr, true)
}

func (sr *sampleReader) skyThoughtRecord(w where, key string, index int, e gjson.Result, d *door) error {
	resp, usage, err := skyThoughtLists(w, e)
	if err != nil {
		return err
	}
	q, _ := firstOf(e, "problem", "question")
	var rc recordCtx
	prompt := ""
	if pr := e.Get("prompt"); pr.Type == gjson.String {
		prompt = strings.Clone(pr.Str)
	}
	textKey(&rc, str(q), prompt, gjson.Result{}, "", index)
	// The results are keyed by the problem's key (the task's id, or its position in the data the
	// run read): a second way to name it, checked against the text.
	rc.key, rc.kind, rc.idField = strings.Clone(key), KeyAuto, "key"
	ref, _ := firstOf(e, "answer", "expected_answer")
	rc.reference = str(ref)
	for i, r := range resp {
		field := fmt.Sprintf("responses[%d]", i)
		c := r.Get("content")
		if c.Type != gjson.String {
			return w.errorf(field+".content", "want the model's response (a string), got %s (read as %s)", kindOf(c.Raw), Describe(FormatSkyThought))
		}
		p := pending{Sample: Sample{Completion: strings.Clone(c.Str), Reason: str(r.Get("reason"))}}
		if v := r.Get("correctness"); v.Exists() {
			if p.Correct, err = w.verdict(field+".correctness", v.Raw, 0); err != nil {
				return err
			}
		}
		if i < len(usage) {
			if p.CompletionTokens, err = tokens(w, fmt.Sprintf("token_usages[%d].completion_tokens", i), usage[i].Get("completion_tokens")); err != nil {
				return err
			}
		}
		p.perLine = true
		d.watch(w, p.Completion, [2]string{"answer", rc.reference})
		sr.pend = append(sr.pend, p)
	}
	sr.list = mustPaths("responses")
	err = sr.emit(w, rc)
	sr.list = nil
	return err
}

// skyThoughtLists returns a record's responses and token usages: lists, or (first releases) one
// entry or list per temperature, of which a file may hold one.
func skyThoughtLists(w where, e gjson.Result) (resp, usage []gjson.Result, err error) {
	rs := e.Get("responses")
	us := e.Get("token_usages")
	if rs.IsObject() {
		var temps []string
		rs.ForEach(func(k, _ gjson.Result) bool { temps = append(temps, k.String()); return true })
		if len(temps) != 1 {
			return nil, nil, w.errorf("responses", "responses at %d temperatures (%s): Reach compares samples drawn at one temperature; split the file per temperature (read as %s)",
				len(temps), strings.Join(temps, ", "), Describe(FormatSkyThought))
		}
		rs, us = rs.Get(escapeKey(temps[0])), us.Get(escapeKey(temps[0]))
	}
	if rs.IsObject() { // one entry (n = 1)
		return []gjson.Result{rs}, []gjson.Result{us}, nil
	}
	if !rs.IsArray() {
		return nil, nil, w.errorf("responses", "want the model's responses (a list), got %s (read as %s: a results.json written after generation)", kindOf(rs.Raw), Describe(FormatSkyThought))
	}
	return rs.Array(), us.Array(), nil
}

// ---- MathArena ----

// readMathArena reads one problem's runs. Its fields come in the writer's order, which put the
// conversations before the grades in the first releases: the runs are kept until the end of the
// document (one problem, as one JSONL line would be), at most MaxRecordBytes of them.
func readMathArena(sr *sampleReader, r io.Reader) error {
	ds := newDocScanner(r, sr.file, sr.o.Limits)
	var (
		top     = map[string]gjson.Result{}
		runs    []string
		size    int
		runLine = map[int]int{}
	)
	small := func(key string) error { // a field kept whole: bounded by MaxRecordBytes
		raw, _, err := ds.record()
		if err != nil {
			return err
		}
		top[key] = gjson.ParseBytes(append([]byte(nil), raw...))
		size += len(raw)
		return nil
	}
	err := ds.object(func(key string) error {
		switch key {
		case "idx", "problem", "gold_answer", "answers", "correct", "detailed_costs", "N":
			return small(key)
		case "messages":
			return ds.array(func(i int) error {
				raw, line, err := ds.record()
				if err != nil {
					return err
				}
				runLine[i] = line
				text, err := mathArenaResponse(where{file: sr.file, line: line, record: fmt.Sprintf("messages[%d]", i)}, gjson.ParseBytes(raw))
				if err != nil {
					return err
				}
				if size += len(text); size > sr.o.Limits.MaxRecordBytes {
					return ds.errorf("one problem's runs longer than the limit of %s (set REACH_MAX_LINE_BYTES to raise it)", byteSize(int64(sr.o.Limits.MaxRecordBytes)))
				}
				runs = append(runs, text)
				return nil
			})
		}
		return ds.skip() // history, judgment, costs: not samples
	})
	if err != nil {
		return err
	}
	if err := ds.end(); err != nil {
		return err
	}
	return sr.mathArenaRuns(top, runs, runLine)
}

// mathArenaResponse is a run's final response: the last assistant message that is no reasoning
// ("cot") or tool call, as MathArena's grader parses it.
func mathArenaResponse(w where, conv gjson.Result) (string, error) {
	if !conv.IsArray() {
		return "", w.errorf("", "want a run's conversation (a list of messages), got %s (read as %s)", kindOf(conv.Raw), Describe(FormatMathArena))
	}
	out := ""
	conv.ForEach(func(_, m gjson.Result) bool {
		role, typ := m.Get("role").String(), m.Get("type").String()
		if (role == "assistant" || role == "") && (typ == "" || typ == "response") {
			out = inspectText(m.Get("content"))
		}
		return true
	})
	return out, nil
}

func (sr *sampleReader) mathArenaRuns(top map[string]gjson.Result, runs []string, runLine map[int]int) error {
	w := where{file: sr.file, record: "messages"}
	correct, answers, costs := top["correct"].Array(), top["answers"].Array(), top["detailed_costs"].Array()
	if !top["correct"].IsArray() {
		return w.errorf("correct", "want one grade per run (a list), got %s (read as %s)", kindOf(top["correct"].Raw), Describe(FormatMathArena))
	}
	if len(runs) != len(correct) {
		return w.errorf("correct", "%d grades for %d runs in messages (read as %s)", len(correct), len(runs), Describe(FormatMathArena))
	}
	var rc recordCtx
	textKey(&rc, str(top["problem"]), "", top["idx"], "idx", 0)
	rc.reference = str(top["gold_answer"])
	d := door{field: "messages[].content"}
	for i, text := range runs {
		at := where{file: sr.file, line: runLine[i], record: fmt.Sprintf("messages[%d]", i)}
		p := pending{Sample: Sample{Completion: text}}
		switch c := correct[i]; c.Type {
		case gjson.True, gjson.False, gjson.Number:
			ok, err := at.verdict(fmt.Sprintf("correct[%d]", i), c.Raw, 0)
			if err != nil {
				return err
			}
			p.Correct = ok
		default: // "TODO Grading", null: not graded yet
			p.Reason = "not graded: " + c.String()
		}
		if i < len(answers) {
			if a := str(answers[i]); a != "None" {
				p.Extracted = a
			}
		}
		if i < len(costs) {
			var err error
			if p.CompletionTokens, err = tokens(at, fmt.Sprintf("detailed_costs[%d].output_tokens", i), costs[i].Get("output_tokens")); err != nil {
				return err
			}
		}
		if text == "" {
			p.Reason = strings.TrimPrefix(p.Reason+"; no final response (the run ended in reasoning or a tool call)", "; ")
		}
		p.perLine = true
		d.watch(at, text, [2]string{"gold_answer", rc.reference}, [2]string{"answer", p.Extracted})
		sr.pend = append(sr.pend, p)
	}
	if len(runs) == 0 {
		return w.errorf("messages", "no runs (read as %s)", Describe(FormatMathArena))
	}
	sr.list = mustPaths("messages")
	err := sr.emit(w, rc)
	sr.list = nil
	if err != nil {
		return err
	}
	return d.check(sr, false) // one problem per file: all its runs may end in reasoning
}

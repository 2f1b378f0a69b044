package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// OpenCompass writes two files per task. predictions/<model>/<task>.json is one object
// {"0": {origin_prompt, prediction, gold}, "1": ...} (a JSONL variant with an idx field while the
// run is unfinished); with n repeats the dataset appears n times over, so entry i is problem
// i mod N. results/<model>/<task>.json holds the scores and, with dump_details, "details": one entry
// per problem (example_abbr "<abbr>_<idx>", and lists pred, answer, correct with one value per
// repeat) in current versions, or {"0": {prompt, origin_prediction, predictions, references,
// correct}} and [{pred, answer, correct}] in older ones.

var openCompassPrediction = spec{format: FormatOpenCompass, list: mustPaths("prediction"), single: true, repeatable: true,
	prompt: mustPaths("origin_prompt.#.prompt", "origin_prompt"), reference: mustPaths("gold")}

// readOpenCompass reads a predictions or results file.
func readOpenCompass(sr *sampleReader, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(64 << 10)
	first, _, _ := bytes.Cut(bytes.TrimSpace(bytes.TrimPrefix(head, utf8BOM)), []byte("\n"))
	if gjson.ValidBytes(first) && gjson.GetBytes(first, "origin_prompt").Exists() && gjson.GetBytes(first, "idx").Exists() {
		// The JSONL predictions of an unfinished run: {"idx": 3, "origin_prompt": ..., "prediction": ...}.
		s := openCompassPrediction
		s.id, s.idKind = mustPaths("idx"), KeyCyclic
		sr.spec = s
		return sr.readLines(br)
	}
	d := newDocScanner(br, sr.file, sr.o.Limits)
	var n int
	err := d.object(func(key string) error {
		if key == "details" {
			return sr.openCompassDetails(d)
		}
		c, err := d.peek()
		if err != nil {
			return err
		}
		if _, numErr := strconv.Atoi(key); numErr != nil || c != '{' {
			if c == '-' || (c >= '0' && c <= '9') { // a score: accuracy, ...
				v, err := d.value(1 << 10)
				sr.meta.set(key, string(v))
				return err
			}
			return d.skip()
		}
		raw, line, err := d.record()
		if err != nil {
			return err
		}
		w := where{file: sr.file, line: line, record: strconv.Quote(key)}
		if err := checkJSON(w, raw, sr.o.Limits); err != nil {
			return err
		}
		sr.spec = openCompassPrediction
		n++
		return sr.keyedRecord(w, n-1, u2s(raw), recordCtx{key: key, kind: KeyCyclic, idField: key})
	})
	if err != nil {
		return err
	}
	return d.end()
}

// openCompassDetails reads a results file's details, a list or an object of entries.
func (sr *sampleReader) openCompassDetails(d *docScanner) error {
	c, err := d.peek()
	if err != nil {
		return err
	}
	one := func(i int, key string) error {
		raw, line, err := d.record()
		if err != nil {
			return err
		}
		w := where{file: sr.file, line: line, record: fmt.Sprintf("details[%s]", key)}
		if kindOf(u2s(raw)) != "object" { // "type": "GEN"
			return nil
		}
		if err := checkJSON(w, raw, sr.o.Limits); err != nil {
			return err
		}
		return sr.openCompassDetail(w, i, u2s(raw))
	}
	if c == '[' {
		return d.array(func(i int) error { return one(i, strconv.Itoa(i)) })
	}
	i := 0
	return d.object(func(key string) error {
		i++
		return one(i-1, key)
	})
}

// openCompassDetail reads one details entry: a problem with one value per repeat in lists, or one
// sample with single values.
func (sr *sampleReader) openCompassDetail(w where, i int, rec string) error {
	e := gjson.Parse(rec)
	var rc recordCtx
	if abbr := e.Get("example_abbr").String(); abbr != "" {
		j := strings.LastIndexByte(abbr, '_')
		if _, err := strconv.Atoi(abbr[j+1:]); j < 0 || err != nil {
			return w.errorf("example_abbr", "want <dataset>_<index>, got %q", abbr)
		}
		rc.key, rc.kind, rc.idField = strings.Clone(abbr[j+1:]), KeyIndex0, "example_abbr"
	} else {
		rc.key, rc.kind = strconv.Itoa(i), KeyCyclic
	}
	correct := e.Get("correct")
	if !correct.Exists() {
		correct = e.Get("is_correct")
	}
	if !correct.Exists() {
		return w.errorf("correct", "a details entry without a verdict (correct)")
	}
	at := func(v gjson.Result, j int) gjson.Result {
		if v.IsArray() {
			return v.Get(strconv.Itoa(j))
		}
		if j == 0 {
			return v
		}
		return gjson.Result{}
	}
	n := 1
	if correct.IsArray() {
		n = len(correct.Array())
	}
	rc.prompt = strings.Clone(inspectText(at(e.Get("prompt"), 0)))
	ref := e.Get("answer")
	if !ref.Exists() {
		ref = e.Get("references")
	}
	rc.reference = strings.Clone(at(ref, 0).String())
	text := e.Get("origin_prediction")
	extracted := e.Get("pred")
	if !extracted.Exists() {
		extracted = e.Get("predictions")
	}
	for j := range n {
		var p pending
		v := at(correct, j)
		field := "correct"
		if correct.IsArray() {
			field = fmt.Sprintf("correct[%d]", j)
		}
		var err error
		if p.Correct, err = w.verdict(field, v.Raw, sr.threshold); err != nil {
			return err
		}
		if t := at(text, j); t.Type == gjson.String {
			p.Completion = strings.Clone(t.Str)
		}
		if x := at(extracted, j); x.Exists() && !x.IsObject() && !x.IsArray() {
			p.Extracted = strings.Clone(x.String())
		}
		p.perLine = n > 1
		sr.pend = append(sr.pend, p)
	}
	if n > 1 {
		sr.list = mustPaths("correct") // per-problem: a repeated problem is refused
	}
	err := sr.emit(w, rc)
	sr.list = nil
	return err
}

// readEvalPlusResults reads EvalPlus's eval_results.json: {"date", "hash", "eval": {task_id:
// [{task_id, solution, base_status, plus_status, base_fail_tests, plus_fail_tests}]}}, or the
// first releases' {task_id: {nfiles, base: [[status, details]], plus: [...]}} without solutions.
// A sample is correct when it passes the base tests and the plus tests (EvalPlus's "base + extra");
// without plus tests (--base-only), the base tests.
func readEvalPlusResults(sr *sampleReader, r io.Reader) error {
	d := newDocScanner(r, sr.file, sr.o.Limits)
	sawEval := false
	err := d.object(func(key string) error {
		switch key {
		case "date", "hash":
			v, err := d.value(1 << 20)
			if err == nil {
				if key == "date" {
					setOnce(&sr.meta.Date, gjson.Parse(string(v)).String())
				} else {
					sr.meta.set("dataset hash", gjson.Parse(string(v)).String())
				}
			}
			return err
		case "eval":
			sawEval = true
			return d.object(func(task string) error {
				c, err := d.peek()
				if err != nil {
					return err
				}
				if c == '[' {
					return d.array(func(i int) error {
						raw, line, err := d.record()
						if err != nil {
							return err
						}
						w := where{file: sr.file, line: line, record: fmt.Sprintf("eval[%q][%d]", task, i)}
						if err := checkJSON(w, raw, sr.o.Limits); err != nil {
							return err
						}
						return sr.evalPlusEntry(w, task, i, u2s(raw))
					})
				}
				raw, line, err := d.record()
				if err != nil {
					return err
				}
				w := where{file: sr.file, line: line, record: fmt.Sprintf("eval[%q]", task)}
				if err := checkJSON(w, raw, sr.o.Limits); err != nil {
					return err
				}
				return sr.evalPlusOld(w, task, u2s(raw))
			})
		}
		return d.skip()
	})
	if err != nil {
		return err
	}
	if !sawEval {
		return &Error{File: sr.file, Msg: `not an EvalPlus or BigCodeBench eval_results.json: no "eval" object`}
	}
	return d.end()
}

// evalPlusEntry reads one sample of an eval_results.json: EvalPlus's (base_status, plus_status) or
// BigCodeBench's (status, details), whichever fields the entry has: the two tools share the top
// level, so a file sniffed as one whose entries are the other's is read as the other.
func (sr *sampleReader) evalPlusEntry(w where, task string, i int, rec string) error {
	e := gjson.Parse(rec)
	base, plus := e.Get("base_status"), e.Get("plus_status")
	if status := e.Get("status"); !base.Exists() && status.Exists() {
		return sr.bigCodeBenchEntry(w, task, i, e, status)
	}
	if base.Type != gjson.String {
		return w.errorf("base_status", "want \"pass\" or \"fail\", got %s (read as %s, whose entries have base_status and plus_status; BigCodeBench's have status: this entry has neither)",
			kindOf(base.Raw), Describe(FormatEvalPlusResults))
	}
	ok := base.Str == "pass" && (plus.Type == gjson.Null || !plus.Exists() || plus.Str == "pass")
	p := pending{Sample: Sample{Correct: &ok, Completion: strings.Clone(e.Get("solution").String()),
		Reason: "base: " + base.Str + ", plus: " + plusText(plus)}}
	p.SampleIndex, p.indexed, p.idxField = i, true, func() string { return fmt.Sprintf("eval[%q][%d]", task, i) }
	sr.pend = append(sr.pend, p)
	key := strings.Clone(task)
	return sr.emit(w, recordCtx{key: key, kind: KeyAuto, idField: "eval"})
}

// bigCodeBenchEntry reads a BigCodeBench sample: status "pass" is correct, "fail" and "timeout" are
// not; details (failed test -> trace) becomes the reason.
func (sr *sampleReader) bigCodeBenchEntry(w where, task string, i int, e, status gjson.Result) error {
	if sr.format != FormatBigCodeBench {
		sr.format = FormatBigCodeBench // the tool named in the run's metadata
	}
	switch status.Str {
	case "pass", "fail", "timeout":
	default:
		return w.errorf("status", "want \"pass\", \"fail\" or \"timeout\", got %.40s (read as %s)", status.Raw, Describe(FormatBigCodeBench))
	}
	ok := status.Str == "pass"
	reason := "status: " + status.Str
	if d := e.Get("details"); d.IsObject() && len(d.Map()) > 0 {
		reason += "; " + compactJSON(d)
	}
	if len(reason) > 500 {
		reason = reason[:500] + "…"
	}
	p := pending{Sample: Sample{Correct: &ok, Completion: strings.Clone(e.Get("solution").String()), Reason: strings.ToValidUTF8(reason, "")}}
	p.SampleIndex, p.indexed, p.idxField = i, true, func() string { return fmt.Sprintf("eval[%q][%d]", task, i) }
	sr.pend = append(sr.pend, p)
	return sr.emit(w, recordCtx{key: strings.Clone(task), kind: KeyAuto, idField: "eval"})
}

func plusText(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	return "not run"
}

func (sr *sampleReader) evalPlusOld(w where, task, rec string) error {
	e := gjson.Parse(rec)
	base := e.Get("base")
	if !base.IsArray() {
		return w.errorf("base", "want a list of [status, details] per sample, got %s", kindOf(base.Raw))
	}
	plus := e.Get("plus").Array()
	for i, b := range base.Array() {
		st := b.Get("0").String()
		ok := st == "success" || st == "pass"
		ps := gjson.Result{}
		if i < len(plus) {
			ps = plus[i].Get("0")
			ok = ok && (ps.String() == "success" || ps.String() == "pass")
		}
		p := pending{Sample: Sample{Correct: &ok, Reason: "base: " + st + ", plus: " + plusText(ps)}}
		p.SampleIndex, p.indexed, p.idxField = i, true, func() string { return fmt.Sprintf("base[%d]", i) }
		p.perLine = true
		sr.pend = append(sr.pend, p)
	}
	sr.list = mustPaths("base")
	err := sr.emit(w, recordCtx{key: strings.Clone(task), kind: KeyAuto, idField: "eval"})
	sr.list = nil
	return err
}

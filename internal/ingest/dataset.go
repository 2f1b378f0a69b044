package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/reach-lab/reach/internal/verify/code"
)

// Problem is one dataset row in canonical form.
type Problem struct {
	// Key is the dataset's own id, from the first of unique_id, id, qid, task_id, idx, question_id that the file's
	// first line has (numbers as decimal text); "" when the file has none (then Index identifies it).
	Key string
	// Index is the 0-based position among non-blank lines: the Qwen evaluator's idx.
	Index int
	// Statement is problem, question, prompt (HumanEval), question_content (LiveCodeBench),
	// description (CodeContests) or text (MBPP), first found.
	Statement string
	// Reference is answer, gold, gt or ground_truth, first found; numbers as text (27.0 -> "27").
	// A GSM8K answer ending in "#### N" becomes "N" (the full text goes to Extra["solution"]).
	Reference string
	// Subject is subject (or MATH's type); Level is level without a "Level " prefix ("Level 3" -> "3").
	Subject, Level string
	// Kind is "code" (the row has tests: HumanEval test/entry_point, MBPP test_list, or stdin/stdout
	// tests such as APPS input_output; see verify/code.ParseTests, which must accept them), "choice"
	// (Reference is a single letter A-E and the row lists options) or "math".
	Kind string
	// Extra holds every other top-level field as text (prompt, test, entry_point,
	// canonical_solution, solution, url, ...); non-string values as compact JSON. prompt is kept
	// here even when it is the Statement, since code verifiers need it verbatim.
	Extra map[string]string
}

// Problem kinds.
const (
	KindMath   = "math"
	KindCode   = "code"
	KindChoice = "choice"
)

var (
	keyFields       = []string{"unique_id", "id", "qid", "task_id", "idx", "question_id"} // question_id: LiveCodeBench
	statementFields = []string{"problem", "question", "prompt", "question_content", "description", "text"}
	referenceFields = []string{"answer", "gold", "gt", "ground_truth"}
	subjectFields   = []string{"subject", "type"}
	gsm8kFinal      = regexp.MustCompile(`(?s)\n?####\s*(.+?)\s*$`)
	optionLabels    = regexp.MustCompile(`(?m)(\([A-E]\)|^\s*[A-E][.):])`)
)

// ReadDataset reads a JSONL problem set and calls fn once per problem, in file order. A bad line
// (invalid JSON, no statement, a key field missing that the first line had, a duplicate key, a wrongly
// typed field) stops the read with an *Error naming file, line and field; an error from fn stops it
// too and comes back wrapped with the file and line.
func ReadDataset(r io.Reader, file string, fn func(Problem) error) error {
	keyField, first := "", true
	seen := map[string]int{} // key -> line, to report duplicates
	ls := newLineSource(r, file, DefaultLimits)
	var top []kv
	for {
		line, err := ls.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		w := where{file: file, line: ls.line}
		if err := checkJSON(w, line, DefaultLimits); err != nil {
			return err
		}
		if top, err = topFields(w, u2s(line), top[:0]); err != nil {
			return err
		}
		obj := make(map[string]string, len(top))
		for _, f := range top {
			obj[strings.Clone(f.key)] = f.val // keys outlive the line (Extra)
		}
		if first {
			if f := samplesField(obj); f != "" {
				return w.errorf(f, "this looks like a samples file, not a problem set: its records carry model output (%q); give it as a model's samples file and the problems (statement and reference answer) as the dataset", f)
			}
			keyField = firstPresent(obj, keyFields)
			first = false
		}
		p, err := w.problem(obj, keyField, ls.index)
		if err != nil {
			return err
		}
		if p.Key != "" {
			if at, dup := seen[p.Key]; dup {
				return w.errorf(keyField, "duplicate problem id %q (first on line %d)", p.Key, at)
			}
			seen[p.Key] = ls.line
		}
		if err := fn(p); err != nil {
			return fmt.Errorf("%s:%d: %w", file, ls.line, err)
		}
	}
	if ls.index < 0 {
		return &Error{File: file, Msg: "empty file: no JSON lines"}
	}
	return nil
}

// samplesField names a field of a samples file (model output) that no
// problem set carries, or "". Code datasets' own solutions (MBPP's code,
// HumanEval's canonical_solution, APPS's solutions) are not model output.
func samplesField(obj map[string]string) string {
	if f := firstPresent(obj, []string{"completion", "completions", "resps", "filtered_resps", "rollouts",
		"model_response", "model_output", "generated_text"}); f != "" {
		return f
	}
	// The Qwen2.5-Math evaluator's files (question, gt, code, pred) carry
	// their problems and serve as a dataset of their own: not refused.
	return ""
}

func firstPresent(obj map[string]string, names []string) string {
	for _, n := range names {
		if raw, ok := obj[n]; ok && kindOf(raw) != "null" {
			return n
		}
	}
	return ""
}

func (d where) problem(obj map[string]string, keyField string, index int) (Problem, error) {
	p := Problem{Index: index, Extra: map[string]string{}}
	used := map[string]bool{}
	var err error
	if keyField != "" {
		raw, ok := obj[keyField]
		if !ok {
			return p, d.errorf(keyField, "missing (the file's first line has it)")
		}
		if p.Key, err = d.key(keyField, raw); err != nil {
			return p, err
		}
		used[keyField] = true
	}
	sf := firstPresent(obj, statementFields)
	if sf == "" {
		return p, d.errorf("problem", "missing: a problem needs a problem, question or prompt field")
	}
	if p.Statement, err = d.str(sf, obj[sf]); err != nil {
		return p, err
	}
	if strings.TrimSpace(p.Statement) == "" {
		return p, d.errorf(sf, "empty problem statement")
	}
	used[sf] = sf != "prompt"
	if rf := firstPresent(obj, referenceFields); rf != "" {
		if k := kindOf(obj[rf]); k == "list" || k == "object" {
			return p, d.errorf(rf, "want a string or number, got %s", k)
		}
		if p.Reference, err = d.text(rf, obj[rf]); err != nil {
			return p, err
		}
		used[rf] = true
		if m := gsm8kFinal.FindStringSubmatchIndex(p.Reference); m != nil {
			if _, has := obj["solution"]; !has {
				p.Extra["solution"] = p.Reference
			}
			p.Reference = p.Reference[m[2]:m[3]]
		}
	}
	if f := firstPresent(obj, subjectFields); f != "" {
		if p.Subject, err = d.text(f, obj[f]); err != nil {
			return p, err
		}
		used[f] = true
	}
	if raw, ok := obj["level"]; ok {
		if p.Level, err = d.text("level", raw); err != nil {
			return p, err
		}
		p.Level = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(p.Level), "Level "))
		used["level"] = true
	}
	for k, raw := range obj {
		if used[k] {
			continue
		}
		switch kindOf(raw) {
		case "null":
		case "string", "number", "bool":
			if p.Extra[k], err = d.text(k, raw); err != nil {
				return p, err
			}
		default:
			var b bytes.Buffer
			if err := json.Compact(&b, []byte(raw)); err != nil {
				return p, d.errorf(k, "invalid JSON: %v", err)
			}
			p.Extra[k] = b.String()
		}
	}
	p.Kind = problemKind(p, obj)
	if p.Kind == KindCode {
		// A code problem is graded by running its tests: refuse one whose
		// tests cannot be read now, naming the field, not at grading time.
		if _, err := code.ParseTests(p.Extra); err != nil {
			var fe *code.FieldError
			if errors.As(err, &fe) {
				return p, d.errorf(fe.Field, "%s", fe.Msg)
			}
			return p, d.errorf("test", "%v", err)
		}
	}
	return p, nil
}

func problemKind(p Problem, obj map[string]string) string {
	if code.IsCodeRow(func(f string) bool { raw, ok := obj[f]; return ok && kindOf(raw) != "null" }) {
		return KindCode
	}
	ref := strings.Trim(strings.TrimSpace(p.Reference), "()")
	if len(ref) == 1 && ref[0] >= 'A' && ref[0] <= 'E' {
		_, opts := obj["options"]
		_, choices := obj["choices"]
		if opts || choices || len(optionLabels.FindAllString(p.Statement, 2)) == 2 {
			return KindChoice
		}
	}
	return KindMath
}

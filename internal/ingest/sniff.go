package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// SniffBytes is how much of a file Sniff should be given: enough for the keys of a first line
// whose first completion is long. Less works for files with short lines.
const SniffBytes = 256 << 10

// Sniff says which format a samples file is from its first bytes (ideally SniffBytes of them; the
// last line may be cut anywhere and is used as far as it goes). For JSONL that matches no known
// format it returns FormatMapped and a guessed Mapping for the user to confirm or edit; the guess may
// leave fields empty when nothing fits. It returns an *Error (line 0 or the line at fault) when the
// bytes are empty, binary, a JSON array, JSON that does not parse, or text that is neither JSONL nor a
// counts CSV with its header.
func Sniff(head []byte, file string) (Format, *Mapping, error) {
	head = bytes.TrimPrefix(head, utf8BOM)
	fail := func(line int, format string, args ...any) (Format, *Mapping, error) {
		return "", nil, &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return fail(0, "empty file")
	}
	if bytes.IndexByte(head, 0) >= 0 || !validUTF8Prefix(head) {
		return fail(0, "binary data (NUL bytes or invalid UTF-8): not JSONL or CSV")
	}
	lines := bytes.Split(head, []byte("\n"))
	first := 0
	for len(bytes.TrimSpace(lines[first])) == 0 {
		first++
	}
	line := bytes.TrimSpace(lines[first])
	switch line[0] {
	case '[':
		return fail(first+1, "a JSON array, not JSONL: write one JSON object per line")
	case '{':
	default:
		return sniffCSV(line, file, first+1)
	}
	top := &shape{}
	for i, seen := first, 0; i < len(lines) && seen < 5; i++ {
		l := bytes.TrimSpace(lines[i])
		if len(l) == 0 {
			continue
		}
		seen++
		cut := i == len(lines)-1 // the head may end inside this line
		if err := top.read(l); err != nil && !(cut && isEOF(err)) {
			msg := "invalid JSON"
			if isEOF(err) {
				msg = "truncated JSON"
			}
			return fail(i+1, "%s: %v", msg, err)
		}
	}
	if len(top.keys) == 0 {
		return fail(first+1, "want one JSON object per line, got %.40q", line)
	}
	f, m := classify(top)
	return f, m, nil
}

func isEOF(err error) bool { return err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) }

// validUTF8Prefix reports whether b is valid UTF-8, allowing a rune cut at the very end.
func validUTF8Prefix(b []byte) bool {
	if utf8.Valid(b) {
		return true
	}
	for k := 1; k <= 3 && k < len(b); k++ {
		if utf8.Valid(b[:len(b)-k]) && !utf8.FullRune(b[len(b)-k:]) {
			return true
		}
	}
	return false
}

func sniffCSV(line []byte, file string, n int) (Format, *Mapping, error) {
	cols := strings.Split(strings.ToLower(string(line)), ",")
	for i := range cols {
		cols[i] = strings.Trim(strings.TrimSpace(cols[i]), `"`)
	}
	if slices.Contains(cols, "problem_id") && slices.Contains(cols, "n") &&
		(slices.Contains(cols, "correct") || slices.Contains(cols, "c")) {
		return FormatCountsCSV, nil, nil
	}
	if len(cols) > 1 {
		return "", nil, &Error{File: file, Line: n, Msg: fmt.Sprintf("a CSV must be per-problem counts with the header problem_id,n,correct; got %.80q", line)}
	}
	return "", nil, &Error{File: file, Line: n, Msg: fmt.Sprintf("not JSONL (no '{' at the start) nor CSV: %.40q", line)}
}

// shape is what Sniff learns of a JSON object: its keys (in order), their kinds, and one level down
// (the first element of each list, the fields of each object).
type shape struct {
	keys []string
	kind map[string]string // "string" "number" "bool" "null" "list" "object"
	elem map[string]string // kind of a list's first element
	sub  map[string]*shape // fields of an object, or of a list's first object element
}

func (s *shape) add(key, kind string) {
	if s.kind == nil {
		s.kind, s.elem, s.sub = map[string]string{}, map[string]string{}, map[string]*shape{}
	}
	if _, ok := s.kind[key]; !ok {
		s.keys = append(s.keys, key)
		s.kind[key] = kind
	}
}

func (s *shape) child(key string) *shape {
	if s.sub[key] == nil {
		s.sub[key] = &shape{}
	}
	return s.sub[key]
}

// read merges one JSONL line into s; on error s keeps what was read before it.
func (s *shape) read(line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		if err == nil {
			err = fmt.Errorf("want a JSON object, got %s", tokenKind(t))
		}
		return err
	}
	return s.fields(dec, 0)
}

// fields reads an object's fields (after its '{') into s, down to depth 1.
func (s *shape) fields(dec *json.Decoder, depth int) error {
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key := t.(string)
		if t, err = dec.Token(); err != nil {
			s.add(key, "")
			return err
		}
		k := tokenKind(t)
		s.add(key, k)
		switch {
		case k == "object" && depth == 0:
			err = s.child(key).fields(dec, depth+1)
		case k == "list" && depth == 0:
			err = s.list(dec, key)
		case k == "object" || k == "list":
			err = skipRest(dec)
		}
		if err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

// list notes the kind (and, for objects, the fields) of a list's first element, skips the rest.
func (s *shape) list(dec *json.Decoder, key string) error {
	if dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		k := tokenKind(t)
		if _, ok := s.elem[key]; !ok {
			s.elem[key] = k
		}
		switch k {
		case "object":
			err = s.child(key).fields(dec, 1)
		case "list":
			err = skipRest(dec)
		}
		if err != nil {
			return err
		}
	}
	return skipRest(dec)
}

// skipRest consumes tokens up to the end of the container whose opening token was just read.
func skipRest(dec *json.Decoder) error {
	for depth := 1; depth > 0; {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

func (s *shape) is(key string, kinds ...string) bool {
	k, ok := s.kind[key]
	return ok && (len(kinds) == 0 || slices.Contains(kinds, k))
}

// first returns the first candidate that s has with one of the kinds ("" if none).
func (s *shape) first(cands []string, kinds ...string) string {
	for _, c := range cands {
		if s.is(c, kinds...) {
			return c
		}
	}
	return ""
}

var (
	idCands        = []string{"problem_id", "qid", "idx", "id", "task_id", "unique_id", "question_id", "problem_idx", "pid", "index"}
	listCands      = []string{"rollouts", "samples", "completions", "generations", "outputs", "responses", "candidates", "code"}
	completionCand = []string{"completion", "text", "response", "output", "generation", "content", "code", "solution"}
	correctCands   = []string{"correct", "is_correct", "passed", "score", "label"}
	extractedCands = []string{"extracted", "extracted_answer", "pred_token", "pred", "prediction", "pred_answer", "parsed_answer", "pred_value"}
	indexCands     = []string{"sample_index", "sample_idx", "rollout", "rollout_idx", "rollout_id", "sample_id"}
	finishCands    = []string{"finish_reason", "stop_reason"}
	tokensCands    = []string{"completion_tokens", "num_tokens", "n_tokens", "output_tokens", "tokens"}
)

func classify(top *shape) (Format, *Mapping) {
	switch {
	case top.is("code", "list") && (top.is("idx") || top.is("gt") || top.is("score") || top.is("pred")):
		return FormatQwenEval, nil
	case top.is("problem_id") && top.is("completions", "list"):
		return FormatReachProblem, nil
	case top.is("problem_id") && (top.is("completion") || top.is("sample_index")):
		return FormatReachSample, nil
	case top.is("task_id") && top.is("completion", "string"):
		return FormatHumanEvalResults, nil
	}
	return FormatMapped, guessMapping(top)
}

// guessMapping picks, in order of preference: a list of sample objects; a list of completion strings
// with parallel lists; one sample per line at the top level; one sample per line inside an object field.
func guessMapping(top *shape) *Mapping {
	m := &Mapping{ProblemID: top.first(idCands, "string", "number")}
	perSample := func(s *shape, prefix string, completion bool) {
		pick := func(dst *string, cands []string, kinds ...string) {
			if *dst == "" {
				if c := s.first(cands, kinds...); c != "" {
					*dst = prefix + c
				}
			}
		}
		if completion {
			pick(&m.Completion, completionCand, "string")
		}
		pick(&m.Correct, correctCands, "bool", "number")
		pick(&m.Extracted, extractedCands, "string", "number")
		pick(&m.SampleIndex, indexCands, "number")
		pick(&m.FinishReason, finishCands, "string")
		pick(&m.Tokens, tokensCands, "number")
	}
	parallel := func() { // lists beside the sample list, named like per-sample fields
		lists := &shape{}
		for _, k := range top.keys {
			if k != m.List && top.kind[k] == "list" {
				lists.add(k, top.elem[k])
			}
		}
		perSample(lists, "", false)
	}
	var objList, strList string
	for _, k := range append(slices.Clone(listCands), top.keys...) {
		if !top.is(k, "list") {
			continue
		}
		if objList == "" && top.elem[k] == "object" {
			if s := top.sub[k]; s.first(completionCand, "string") != "" || s.first(correctCands, "bool") != "" {
				objList = k
			}
		}
		if strList == "" && top.elem[k] == "string" && slices.Contains(listCands, k) {
			strList = k
		}
	}
	switch {
	case objList != "":
		m.List = objList
		perSample(top.sub[objList], "", true)
		parallel()
	case strList != "":
		m.List = strList
		parallel()
	default:
		perSample(top, "", true)
		if m.Completion == "" && m.Correct == "" {
			for _, k := range top.keys {
				if top.kind[k] == "object" && top.sub[k].first(completionCand, "string") != "" {
					perSample(top.sub[k], k+".", true)
					break
				}
			}
		}
	}
	return m
}

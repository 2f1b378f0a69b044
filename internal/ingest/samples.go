package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Format names an upload format for samples.
type Format string

const (
	// FormatQwenEval: the Qwen2.5-Math / SimpleRL / limit-of-RLVR evaluator output, one line per
	// problem: idx, code (completions), score (verdicts), pred (extracted answers), finish_reason
	// (may be absent or shorter than code). ProblemKey = idx.
	FormatQwenEval Format = "qwen-eval"
	// FormatReachSample: one line per sample: problem_id, sample_index?, completion,
	// finish_reason?, completion_tokens?, correct?, extracted?.
	FormatReachSample Format = "reach-sample"
	// FormatReachProblem: one line per problem: problem_id, completions (strings, or objects with the
	// per-sample fields of FormatReachSample), and optional lists parallel to completions
	// (correct, extracted, finish_reason, completion_tokens) for string completions.
	FormatReachProblem Format = "reach-problem"
	// FormatHumanEvalResults: human-eval / EvalPlus results, one line per sample: task_id,
	// completion, passed?, result? (result is kept as Sample.Reason).
	FormatHumanEvalResults Format = "humaneval-results"
	// FormatCountsCSV: per-problem counts, header problem_id,n,correct (or c).
	FormatCountsCSV Format = "counts-csv"
	// FormatMapped: any other JSONL, read through a Mapping.
	FormatMapped Format = "mapped"
)

// Mapping says which fields of a long-tail JSONL file mean what. Paths are a top-level field name
// ("qid") or one dotted level into an object ("175b_verification.solution").
//
// With List == "" each line is one sample and every path is looked up in the line. With List set each
// line is one problem: ProblemID is looked up in the line, and the per-sample paths inside each list
// item; an item that is a plain string is the completion itself. A per-sample path that is instead a
// top-level list in the line is read as parallel to List (as the Qwen evaluator's score is to code).
type Mapping struct {
	ProblemID    string // e.g. "qid"; "" = the 0-based line number among non-blank lines
	List         string // per-problem list field, e.g. "rollouts"; "" when one line = one sample
	Completion   string // e.g. "text"; required in every sample when set
	Correct      string // e.g. "correct"; "" = the file has no verdicts
	Extracted    string // e.g. "pred_token"
	SampleIndex  string // e.g. "rollout"; "" = order of appearance within the problem
	FinishReason string // e.g. "finish_reason"
	Tokens       string // e.g. "completion_tokens"
}

// Sample is one completion in canonical form.
type Sample struct {
	Line       int    // 1-based line of the file it came from
	ProblemKey string // the problem's id as in the file (numbers as decimal text)
	// SampleIndex is 0-based within the problem: the file's own index, or the order of appearance
	// (across all lines of the problem) when the file has none.
	SampleIndex      int
	Completion       string
	FinishReason     string // "" if unknown
	CompletionTokens int    // 0 = unknown
	Correct          *bool  // the file's own verdict; nil when absent
	Extracted        string // the file's own extracted answer (pred, pred_token); "" if absent
	Reason           string // the file's own verdict reason (human-eval "result"); "" if absent
}

// Count is one problem's aggregate from a counts file: N samples, C of them correct (0 <= C <= N).
type Count struct {
	Line       int
	ProblemKey string
	N, C       int
}

// maxSampleIndex bounds an explicit sample index, so the duplicate check stays a small bitset.
const maxSampleIndex = 1 << 20

// per-sample fields, in spec.paths order.
type fieldID int

const (
	fCompletion fieldID = iota
	fCorrect
	fExtracted
	fIndex
	fFinish
	fTokens
	fReason
	nFields
)

// spec is a Format (or Mapping) resolved to field paths.
type spec struct {
	id    string // "" = line index
	list  string
	paths [nFields]string
}

func builtinSpec(f Format) (spec, bool) {
	reach := [nFields]string{fCompletion: "completion", fCorrect: "correct", fExtracted: "extracted",
		fIndex: "sample_index", fFinish: "finish_reason", fTokens: "completion_tokens"}
	switch f {
	case FormatQwenEval:
		return spec{id: "idx", list: "code", paths: [nFields]string{fCorrect: "score", fExtracted: "pred", fFinish: "finish_reason"}}, true
	case FormatReachSample:
		return spec{id: "problem_id", paths: reach}, true
	case FormatReachProblem:
		return spec{id: "problem_id", list: "completions", paths: reach}, true
	case FormatHumanEvalResults:
		return spec{id: "task_id", paths: [nFields]string{fCompletion: "completion", fCorrect: "passed", fReason: "result"}}, true
	}
	return spec{}, false
}

func mappedSpec(m *Mapping) (spec, error) {
	if m == nil {
		return spec{}, errors.New("format mapped needs a Mapping")
	}
	s := spec{id: m.ProblemID, list: m.List, paths: [nFields]string{fCompletion: m.Completion,
		fCorrect: m.Correct, fExtracted: m.Extracted, fIndex: m.SampleIndex, fFinish: m.FinishReason, fTokens: m.Tokens}}
	if s.list == "" && m.Completion == "" && m.Correct == "" {
		return s, errors.New("mapping names neither a completion nor a verdict field")
	}
	if strings.Contains(s.list, ".") {
		return s, fmt.Errorf("mapping list %q: must be a top-level field", s.list)
	}
	for _, p := range append([]string{s.id, s.list}, s.paths[:]...) {
		if p == "" {
			continue
		}
		if parts := strings.Split(p, "."); len(parts) > 2 || slices.Contains(parts, "") {
			return s, fmt.Errorf("mapping path %q: want a field name or one dotted level (a.b)", p)
		}
	}
	return s, nil
}

// ReadSamples streams a samples file of format f (m is used only for FormatMapped). FormatCountsCSV
// calls onCount once per row; every other format calls onSample once per sample, in file order (a
// per-problem line's samples are delivered after the whole line is read).
//
// Memory: one line's decoded samples, plus a line buffer of at most 4 MiB (longer lines are
// token-streamed: then the decoder's buffer for the largest single JSON value), plus per problem a
// counter and a bitset of sample indices; never the whole file. Lines may be up to 256 MiB.
//
// Errors: bad JSON, a missing or wrongly typed field, an empty file, a C > N or negative count, a
// duplicate sample index within a problem (or duplicate problem in a CSV) stop the read with an
// *Error naming file, line and field. An error from a callback stops it and comes back wrapped with
// file and line; a failed read of r comes back wrapped. A wrong Format or Mapping is a plain error.
func ReadSamples(r io.Reader, file string, f Format, m *Mapping, onSample func(Sample) error, onCount func(Count) error) error {
	if f == FormatCountsCSV {
		if onCount == nil {
			return errors.New("ingest: counts-csv needs onCount")
		}
		return readCounts(r, file, onCount)
	}
	s, ok := builtinSpec(f)
	if f == FormatMapped {
		var err error
		if s, err = mappedSpec(m); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
	} else if !ok {
		return fmt.Errorf("ingest: unknown format %q", f)
	}
	if onSample == nil {
		return fmt.Errorf("ingest: %s needs onSample", f)
	}
	sr := &sampleReader{spec: s, onSample: onSample, probs: map[string]*probState{}, top: map[string]json.RawMessage{}}
	sr.want = map[string]string{}
	if s.id != "" {
		head, _, _ := strings.Cut(s.id, ".")
		sr.want[head] = head
	}
	for _, p := range s.paths {
		if p == "" {
			continue
		}
		head, _, dotted := strings.Cut(p, ".")
		if s.list == "" || !dotted { // with a list, only undotted paths can be parallel lists
			sr.want[head] = head
		}
	}
	return eachLine(r, file, sr.wholeLine, sr.line)
}

type sampleReader struct {
	spec
	onSample func(Sample) error
	want     map[string]string // top-level fields to keep, each mapped to itself (so a scanned key is stored without allocating)
	keys     [][]byte          // the current line's keys, for the duplicate check
	probs    map[string]*probState
	top      map[string]json.RawMessage // the current line's kept fields (reused)
	pend     []pending                  // the current line's samples (reused)
}

// pending is a sample read but not yet delivered: its index is assigned once the problem is known.
type pending struct {
	Sample
	has      uint8  // bit f set when field f was present (and not null) in the item
	idxField string // where the explicit index came from, for errors
}

type probState struct {
	n    int      // samples seen
	used []uint64 // bitset of sample indices taken
}

func (sr *sampleReader) line(d *lineDec) error {
	clear(sr.top)
	listSeen := false
	err := d.object("", func(key string) error {
		switch {
		case sr.list != "" && key == sr.list:
			listSeen = true
			return d.array(key, func(i int) error {
				field := fmt.Sprintf("%s[%d]", key, i)
				raw, err := d.raw(field)
				if err != nil {
					return err
				}
				return sr.item(d, raw, field)
			})
		case sr.want[key] != "":
			raw, err := d.raw(key)
			sr.top[key] = raw
			return err
		}
		return d.skip(key)
	})
	if err != nil {
		return err
	}
	return sr.finish(d, listSeen)
}

// wholeLine reads a line that json.Valid accepted, by scanning its fields (the fast path).
func (sr *sampleReader) wholeLine(d *lineDec, obj []byte) error {
	clear(sr.top)
	sr.keys = sr.keys[:0]
	listSeen := false
	err := scanObject(obj, func(key, val []byte) error {
		for _, k := range sr.keys {
			if bytes.Equal(k, key) {
				return d.errorf(string(key), "field appears twice in the object")
			}
		}
		sr.keys = append(sr.keys, key)
		if bytes.IndexByte(key, '\\') >= 0 { // an escaped key: rare, unquote it properly
			var k string
			if err := json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &k); err != nil {
				return d.errorf("", "invalid JSON key: %v", err)
			}
			key = []byte(k)
		}
		if sr.list != "" && string(key) == sr.list {
			listSeen = true
			if k := kindOf(val); k != "list" {
				return d.errorf(sr.list, "want a list, got %s", k)
			}
			return scanArray(val, func(i int, item []byte) error {
				return sr.item(d, item, fmt.Sprintf("%s[%d]", sr.list, i))
			})
		}
		if k, ok := sr.want[string(key)]; ok {
			sr.top[k] = val
		}
		return nil
	})
	if err != nil {
		return err
	}
	return sr.finish(d, listSeen)
}

// finish turns the line's kept fields and list items into samples and delivers them.
func (sr *sampleReader) finish(d *lineDec, listSeen bool) error {
	defer func() { clear(sr.pend); sr.pend = sr.pend[:0] }()

	key := strconv.Itoa(d.index)
	if sr.id != "" {
		raw, ok, err := d.lookup(sr.top, sr.id, "")
		if err != nil {
			return err
		}
		if !ok {
			return d.errorf(sr.id, "missing problem id")
		}
		if key, err = d.key(sr.id, raw); err != nil {
			return err
		}
	}
	if sr.list == "" {
		p, err := sr.fromObject(d, sr.top, "")
		if err != nil {
			return err
		}
		sr.pend = append(sr.pend, p)
	} else {
		if !listSeen {
			return d.errorf(sr.list, "missing list of samples")
		}
		if err := sr.parallel(d); err != nil {
			return err
		}
	}
	return sr.emit(d, key)
}

// item reads one list element: a string is the completion, an object holds per-sample fields.
func (sr *sampleReader) item(d *lineDec, raw json.RawMessage, field string) error {
	switch k := kindOf(raw); k {
	case "string":
		s, err := d.str(field, raw)
		if err != nil {
			return err
		}
		sr.pend = append(sr.pend, pending{Sample: Sample{Completion: s}, has: 1 << fCompletion})
		return nil
	case "object":
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return d.errorf(field, "invalid JSON: %v", err)
		}
		p, err := sr.fromObject(d, obj, field+".")
		if err != nil {
			return err
		}
		sr.pend = append(sr.pend, p)
		return nil
	default:
		return d.errorf(field, "want a completion (string) or a sample (object), got %s", k)
	}
}

func (sr *sampleReader) fromObject(d *lineDec, obj map[string]json.RawMessage, prefix string) (pending, error) {
	var p pending
	for f, path := range sr.paths {
		if path == "" {
			continue
		}
		raw, ok, err := d.lookup(obj, path, prefix)
		if err != nil {
			return p, err
		}
		if !ok {
			if fieldID(f) == fCompletion {
				return p, d.errorf(prefix+path, "missing completion")
			}
			continue
		}
		if err := d.set(&p, fieldID(f), prefix+path, raw); err != nil {
			return p, err
		}
	}
	return p, nil
}

// set stores one per-sample value into p; null counts as absent.
func (d *lineDec) set(p *pending, f fieldID, field string, raw json.RawMessage) error {
	if kindOf(raw) == "null" {
		return nil
	}
	var err error
	switch f {
	case fCompletion:
		p.Completion, err = d.str(field, raw)
	case fCorrect:
		p.Correct, err = d.verdict(field, raw)
	case fExtracted:
		p.Extracted, err = d.text(field, raw)
	case fIndex:
		if p.SampleIndex, err = d.count(field, raw); err == nil && p.SampleIndex >= maxSampleIndex {
			err = d.errorf(field, "sample index %d too large (max %d)", p.SampleIndex, maxSampleIndex-1)
		}
		p.idxField = field
	case fFinish:
		p.FinishReason, err = d.str(field, raw)
	case fTokens:
		p.CompletionTokens, err = d.count(field, raw)
	case fReason:
		p.Reason, err = d.text(field, raw)
	}
	if err == nil {
		p.has |= 1 << f
	}
	return err
}

// parallel fills fields from top-level lists parallel to the sample list (Qwen's score, pred,
// finish_reason). An item's own value wins. Verdict lists must match the sample list's length;
// other lists may be shorter (the evaluator sometimes drops finish_reason), never longer.
func (sr *sampleReader) parallel(d *lineDec) error {
	for f, path := range sr.paths {
		raw, ok := sr.top[path]
		if path == "" || !ok || kindOf(raw) == "null" {
			continue
		}
		if k := kindOf(raw); k != "list" {
			return d.errorf(path, "want a list parallel to %s, got %s", sr.list, k)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return d.errorf(path, "invalid JSON: %v", err)
		}
		n := len(sr.pend)
		if len(items) > n || (fieldID(f) == fCorrect && len(items) != n) {
			return d.errorf(path, "has %d entries, %s has %d", len(items), sr.list, n)
		}
		for i, raw := range items {
			if sr.pend[i].has&(1<<f) != 0 {
				continue
			}
			if err := d.set(&sr.pend[i], fieldID(f), fmt.Sprintf("%s[%d]", path, i), raw); err != nil {
				return err
			}
		}
	}
	return nil
}

// emit assigns sample indices within the problem, rejects duplicates, and delivers the line's samples.
func (sr *sampleReader) emit(d *lineDec, key string) error {
	st := sr.probs[key]
	if st == nil && len(sr.pend) > 0 {
		st = &probState{}
		sr.probs[key] = st
	}
	for i := range sr.pend {
		p := &sr.pend[i]
		if p.has&(1<<fIndex) == 0 {
			p.SampleIndex = st.n
		}
		w, bit := p.SampleIndex/64, uint64(1)<<(p.SampleIndex%64)
		if w < len(st.used) && st.used[w]&bit != 0 {
			return d.errorf(p.idxField, "duplicate sample index %d for problem %q", p.SampleIndex, key)
		}
		for w >= len(st.used) {
			st.used = append(st.used, 0)
		}
		st.used[w] |= bit
		st.n++
		p.Line, p.ProblemKey = d.line, key
		if err := sr.onSample(p.Sample); err != nil {
			return fmt.Errorf("%s:%d: %w", d.file, d.line, err)
		}
	}
	return nil
}

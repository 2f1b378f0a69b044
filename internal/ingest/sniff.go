package ingest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
)

// SniffBytes is how much of a file Sniff should be given: enough for the keys of a first line
// whose first completion is long. Less works for files with short lines.
const SniffBytes = 256 << 10

// Sniff says which format a samples file is from its first bytes (ideally SniffBytes of them; the
// last line may be cut anywhere and is used as far as it goes). gzip and zstd are looked through.
// A parquet file is FormatParquet (its columns are at its end, read at import), an Inspect .eval
// zip FormatInspect. For JSON that matches no known layout it returns FormatMapped and a guessed
// Mapping for the user to confirm or edit; the guess may leave fields empty when nothing fits.
//
// It returns an *Error (line 0 or the line at fault) saying what the file looks like when it is not
// a samples file: empty, an image or other binary data, a dataset (problems and answers, no
// completions), a results summary or config, JSON that does not parse, or text that is neither JSON
// nor a counts CSV with its header.
func Sniff(head []byte, file string) (Format, *Mapping, error) {
	sh, err := sniffShape(head, file, 0)
	if err != nil {
		return "", nil, err
	}
	if sh.format != "" {
		return sh.format, nil, nil
	}
	return pickLayout(head, file, sh.shape)
}

// sniffed is what the first bytes show: a container format decided by its bytes, or a shape.
type sniffed struct {
	format Format
	shape  *shape
}

var binaryKinds = []struct {
	magic []byte
	what  string
}{
	{[]byte("\x89PNG"), "a PNG image"}, {[]byte{0xff, 0xd8, 0xff}, "a JPEG image"}, {[]byte("GIF8"), "a GIF image"},
	{[]byte("%PDF"), "a PDF document"}, {[]byte("RIFF"), "a RIFF file (WebP image or WAV audio)"},
	{[]byte("\x7fELF"), "an executable"}, {[]byte("SQLite format 3"), "an SQLite database"},
	{[]byte("\x93NUMPY"), "a NumPy array"}, {[]byte("BZh"), "bzip2-compressed data (use gzip or zstd)"},
	{[]byte("\xfd7zXZ"), "xz-compressed data (use gzip or zstd)"}, {[]byte("ARROW1"), "an Arrow IPC file (write parquet or JSONL)"},
}

// sniffShape reads a head of SniffBytes or fewer: a shorter one is the whole file.
func sniffShape(head []byte, file string, depth int) (sniffed, error) {
	return sniffShapeOf(head, file, depth, len(head) < SniffBytes)
}

// sniffShapeOf is sniffShape with whole saying whether head is all of the file (decompressed, for a
// compressed one): a first record cut off in a whole file is a truncated file, not a cut head.
func sniffShapeOf(head []byte, file string, depth int, whole bool) (sniffed, error) {
	fail := func(line int, format string, args ...any) (sniffed, error) {
		return sniffed{}, &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	head = bytes.TrimPrefix(head, utf8BOM)
	if len(bytes.TrimSpace(head)) == 0 {
		return fail(0, "empty file")
	}
	switch {
	case bytes.HasPrefix(head, magicGzip) && depth < 2:
		zr, err := gzip.NewReader(bytes.NewReader(head))
		if err != nil {
			return fail(0, "gzip: %v", err)
		}
		out, err := io.ReadAll(io.LimitReader(zr, SniffBytes)) // a cut head ends in an error: use what came out
		if len(out) == 0 && err != nil {
			return fail(0, "gzip data that does not decompress: %v", err)
		}
		return sniffShapeOf(out, file, depth+1, whole && err == nil && len(out) < SniffBytes)
	case bytes.HasPrefix(head, magicZstd) && depth < 2:
		zr, err := zstd.NewReader(bytes.NewReader(head), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
		if err != nil {
			return fail(0, "zstd: %v", err)
		}
		defer zr.Close()
		out, err := io.ReadAll(io.LimitReader(zr, SniffBytes))
		if len(out) == 0 && err != nil {
			return fail(0, "zstd data that does not decompress: %v", err)
		}
		return sniffShapeOf(out, file, depth+1, whole && err == nil && len(out) < SniffBytes)
	case bytes.HasPrefix(head, magicParquet):
		return sniffed{format: FormatParquet}, nil
	case bytes.HasPrefix(head, magicZip):
		if bytes.Contains(head, []byte("_journal/start.json")) || bytes.Contains(head, []byte("header.json")) ||
			bytes.Contains(head, []byte("samples/")) {
			return sniffed{format: FormatInspect}, nil
		}
		return fail(0, "a zip archive that is not an Inspect .eval log: unpack it and upload the samples file")
	}
	for _, b := range binaryKinds {
		if bytes.HasPrefix(head, b.magic) {
			return fail(0, "%s, not a samples file", b.what)
		}
	}
	if i := firstNotText(head); i >= 0 {
		line := 1 + bytes.Count(head[:i], []byte("\n"))
		at := i - bytes.LastIndexByte(head[:i], '\n') // 1-based byte of the line
		what := "invalid UTF-8"
		if head[i] == 0 {
			what = "a NUL byte"
		}
		return fail(line, "%s at byte %d: binary data, or text in an encoding other than UTF-8 (Reach reads UTF-8 JSONL, JSON or CSV, and parquet)", what, at)
	}
	lines := bytes.Split(head, []byte("\n"))
	first := 0
	for len(bytes.TrimSpace(lines[first])) == 0 {
		first++
	}
	line := bytes.TrimSpace(lines[first])
	switch line[0] {
	case '[':
		return sniffDoc(head, file, first+1)
	case '{':
	default:
		return sniffText(line, head, file, first+1)
	}
	// One JSON object per line, or one document over many lines (pretty-printed): a first line that
	// is not a whole object, with more lines after it, is a document.
	if !json.Valid(line) && first < len(lines)-1 {
		return sniffDoc(head, file, first+1)
	}
	top := &shape{}
	for i, seen := first, 0; i < len(lines) && seen < 5; i++ {
		l := bytes.TrimSpace(lines[i])
		if len(l) == 0 {
			continue
		}
		seen++
		cut := i == len(lines)-1 // the head may end inside this line
		err := top.read(l)
		if err != nil && cut && isEOF(err) && whole && seen == 1 {
			// The file ends inside its first record: any layout guessed from the fields
			// read so far would be wrong advice.
			return fail(i+1, "truncated JSON: the line ends inside a value (the file ends there: was it cut off while written or copied?)")
		}
		if err != nil && cut && isEOF(err) {
			top.cut = true
		}
		if err != nil && !(cut && isEOF(err)) {
			msg := "invalid JSON"
			if isEOF(err) {
				msg = "truncated JSON"
			}
			return fail(i+1, "%s: %v", msg, err)
		}
	}
	if len(top.keys) == 0 && top.cut {
		return fail(first+1, "a JSON object whose first field is not complete within the first %s of the line (a field name or value longer than that before any other field): Reach recognises a layout from its field names; no samples layout has such a field first", byteSize(SniffBytes))
	}
	if len(top.keys) == 0 {
		return fail(first+1, "want one JSON object per line, got %.40q", line)
	}
	return sniffed{shape: top}, nil
}

// sniffDoc reads the start of a JSON document (an object over many lines, or a list of records):
// the object's keys and the shapes of its values, or the first records' shape.
func sniffDoc(head []byte, file string, line int) (sniffed, error) {
	dec := json.NewDecoder(bytes.NewReader(head))
	t, err := dec.Token()
	if err != nil {
		return sniffed{}, &Error{File: file, Line: line, Msg: "invalid JSON: " + err.Error()}
	}
	sh := &shape{}
	if t == json.Delim('[') {
		for i := 0; i < 5 && dec.More(); i++ {
			t, err := dec.Token()
			if err != nil {
				break
			}
			if t != json.Delim('{') {
				return sniffed{}, &Error{File: file, Line: line, Msg: fmt.Sprintf("a JSON list of %ss, not of records (objects)", tokenKind(t))}
			}
			if err := sh.fields(dec, 0); err != nil {
				if !isEOF(err) {
					return sniffed{}, &Error{File: file, Line: line, Msg: "invalid JSON: " + err.Error()}
				}
				break
			}
		}
		if len(sh.keys) == 0 {
			return sniffed{}, &Error{File: file, Line: line, Msg: "an empty JSON list"}
		}
		return sniffed{shape: sh}, nil
	}
	if err := sh.fields(dec, 0); err != nil && !isEOF(err) {
		return sniffed{}, &Error{File: file, Line: line, Msg: "invalid JSON: " + err.Error()}
	}
	if len(sh.keys) == 0 {
		return sniffed{}, &Error{File: file, Line: line, Msg: "an empty JSON object"}
	}
	sh.doc = true
	return sniffed{shape: sh}, nil
}

func isEOF(err error) bool { return err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) }

// validUTF8Prefix reports whether b is valid UTF-8, allowing a rune cut at the very end.
// firstNotText returns the offset of b's first NUL byte or invalid UTF-8
// sequence (a rune cut by the end of b is not one: b is a file's head), or
// -1 when there is none.
func firstNotText(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		if c == 0 {
			return i
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			if !utf8.FullRune(b[i:]) && len(b)-i < utf8.UTFMax {
				return -1 // cut at the end of the head
			}
			return i
		}
		i += size
	}
	return -1
}

// countsColumns is what a counts CSV's header must name.
const countsColumns = "problem_id, n and correct (or c), e.g. the header problem_id,n,correct"

// sniffText decides what a file that is not JSON is: a counts CSV, or something to name.
func sniffText(line, head []byte, file string, n int) (sniffed, error) {
	fail := func(format string, args ...any) (sniffed, error) {
		return sniffed{}, &Error{File: file, Line: n, Msg: fmt.Sprintf(format, args...)}
	}
	cols := strings.Split(strings.ToLower(string(line)), ",")
	for i := range cols {
		cols[i] = strings.Trim(strings.TrimSpace(cols[i]), `"`)
	}
	if slices.Contains(cols, "problem_id") && slices.Contains(cols, "n") &&
		(slices.Contains(cols, "correct") || slices.Contains(cols, "c")) {
		return sniffed{format: FormatCountsCSV}, nil
	}
	sep := ""
	for _, d := range []string{";", "\t", "|"} {
		if len(cols) == 1 && strings.Count(string(line), d) >= 2 {
			sep = d
			break
		}
	}
	switch {
	case sep != "":
		return fail("a table whose header %.80q separates columns with %q: Reach reads per-problem counts as CSV with commas, naming %s", line, sep, countsColumns)
	case len(cols) > 1:
		return fail("a CSV whose header %.80q is not per-problem counts: the header must name %s", line, countsColumns)
	case bytes.HasPrefix(line, []byte("<")):
		return fail("an HTML or XML document, not a samples file")
	case bytes.HasPrefix(line, []byte("---")) || yamlish(head):
		return fail("a YAML or config file, not a samples file")
	case bytes.HasPrefix(line, []byte("#")):
		return fail("a text or Markdown file, not a samples file")
	}
	return fail("not JSON (no '{' or '[' at the start) nor a counts CSV: %.40q; Reach reads JSONL, JSON, parquet, or counts CSV whose header names %s", line, countsColumns)
}

// yamlish: most of the first lines are "key: value".
func yamlish(head []byte) bool {
	lines := bytes.Split(head, []byte("\n"))
	kv, all := 0, 0
	for _, l := range lines[:min(len(lines), 20)] {
		l = bytes.TrimSpace(l)
		if len(l) == 0 || l[0] == '#' {
			continue
		}
		all++
		if i := bytes.IndexByte(l, ':'); i > 0 && !bytes.ContainsAny(l[:i], " {[\"") || bytes.HasPrefix(l, []byte("- ")) {
			kv++
		}
	}
	return all > 0 && kv*2 > all
}

// shape is what Sniff learns of a JSON object: its keys (in order), their kinds, and below (the
// first element of each list, the fields of each object) down to shapeDepth.
type shape struct {
	keys []string
	kind map[string]string // "string" "number" "bool" "null" "list" "object"
	elem map[string]string // kind of a list's first element
	sub  map[string]*shape // fields of an object, or of a list's first object element
	doc  bool              // the object is a whole document, not one line of JSONL
	cut  bool              // the head ended inside the first record: more fields may follow
}

const shapeDepth = 4

func (s *shape) add(key, kind string) {
	if s.kind == nil {
		s.kind, s.elem, s.sub = map[string]string{}, map[string]string{}, map[string]*shape{}
	}
	if k, ok := s.kind[key]; !ok {
		s.keys = append(s.keys, key)
		s.kind[key] = kind
	} else if k == "null" {
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

// fields reads an object's fields (after its '{') into s, down to shapeDepth.
func (s *shape) fields(dec *json.Decoder, depth int) error {
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := t.(string)
		if !ok {
			return fmt.Errorf("want a key, got %v", t)
		}
		if t, err = dec.Token(); err != nil {
			s.add(key, "")
			return err
		}
		k := tokenKind(t)
		s.add(key, k)
		switch {
		case k == "object" && depth < shapeDepth:
			err = s.child(key).fields(dec, depth+1)
		case k == "list" && depth < shapeDepth:
			err = s.list(dec, key, depth)
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
func (s *shape) list(dec *json.Decoder, key string, depth int) error {
	if dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		k := tokenKind(t)
		if e, ok := s.elem[key]; !ok || e == "null" {
			s.elem[key] = k
		}
		switch k {
		case "object":
			err = s.child(key).fields(dec, depth+1)
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

func tokenKind(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '{':
			return "object"
		case '[':
			return "list"
		}
		return strconv.Quote(v.String())
	case string:
		return "string"
	case float64, json.Number:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", t)
}

func (s *shape) is(key string, kinds ...string) bool {
	if s == nil {
		return false
	}
	k, ok := s.kind[key]
	return ok && (len(kinds) == 0 || slices.Contains(kinds, k))
}

// has reports whether a dotted path exists (each part a key of the object below).
func (s *shape) has(path string, kinds ...string) bool {
	head, rest, deeper := strings.Cut(path, ".")
	if !deeper {
		return s.is(head, kinds...)
	}
	return s != nil && s.sub[head] != nil && s.sub[head].has(rest, kinds...)
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

// find returns the path of the first candidate with one of the kinds: at this level, else inside
// its objects, down to depth levels ("out.text"), breadth first; "" if none.
func (s *shape) find(cands, kinds []string, depth int) string {
	if s == nil {
		return ""
	}
	if c := s.first(cands, kinds...); c != "" {
		return escapeKey(c)
	}
	if depth <= 1 {
		return ""
	}
	for _, k := range s.keys {
		if s.kind[k] == "object" {
			if c := s.sub[k].find(cands, kinds, depth-1); c != "" {
				return escapeKey(k) + "." + c
			}
		}
	}
	return ""
}

func (s *shape) any(keys ...string) bool {
	for _, k := range keys {
		if s.is(k) {
			return true
		}
	}
	return false
}

var (
	idCands        = []string{"problem_id", "qid", "idx", "id", "task_id", "unique_id", "question_id", "problem_idx", "pid", "index", "doc_id", "uuid", "custom_id"}
	listCands      = []string{"rollouts", "samples", "completions", "generations", "outputs", "responses", "candidates", "code", "predictions"}
	completionCand = []string{"completion", "text", "response", "output", "generation", "content", "code", "solution", "prediction"}
	correctCands   = []string{"correct", "is_correct", "ok", "passed", "score", "label", "acc", "accuracy", "reward"}
	extractedCands = []string{"extracted", "extracted_answer", "pred_token", "pred", "prediction", "pred_answer", "parsed_answer", "pred_value"}
	indexCands     = []string{"sample_index", "sample_idx", "rollout", "rollout_idx", "rollout_id", "sample_id", "epoch"}
	finishCands    = []string{"finish_reason", "stop_reason", "finish_reasons"}
	tokensCands    = []string{"completion_tokens", "num_tokens", "n_tokens", "output_tokens", "tokens"}
	questionCands  = []string{"question", "problem"}
	promptCands    = []string{"prompt", "input", "query", "origin_prompt"}
	referenceCands = []string{"gt", "answer", "gold", "ground_truth", "gts", "target", "reference"}
	// A dataset row: a statement and a reference, no completions.
	statementKeys = []string{"problem", "question", "prompt"}
	datasetRefs   = []string{"answer", "solution", "canonical_solution", "test", "ground_truth", "gold"}
	// Fields that only a model's output has.
	outputKeys = []string{"completion", "completions", "response", "responses", "output", "outputs", "generation", "generations",
		"prediction", "predictions", "text", "rollouts", "samples", "code", "resps", "pred", "score", "correct", "is_correct",
		"passed", "model_output", "model_response", "choices"}
)

// classify names the layout of a record (a JSONL line, a document, a parquet schema), or returns
// FormatMapped and a guessed mapping, or an *Error saying what the file is when it is no samples file.
func classify(top *shape, file string) (Format, *Mapping, error) {
	notSamples := func(what string) (Format, *Mapping, error) {
		return "", nil, &Error{File: file, Msg: what}
	}
	if f := layoutsOf(top); len(f) > 0 {
		if f[0] == "" {
			return notSamples("an evaluation results summary (aggregate scores), not per-sample generations: give the samples file (lm-eval --log_samples samples_*.jsonl, lighteval details_*.parquet)")
		}
		return f[0], nil, nil
	}
	if msg := notSamples2(top); msg != "" {
		return notSamples(msg)
	}
	if numericKeys(top) && top.kind[top.keys[0]] == "object" {
		// pandas' to_json(orient="index") and the like: rows keyed by their number. Read as one
		// record, its first row's fields would look like one sample's.
		return notSamples(fmt.Sprintf("a JSON object of records keyed by row number (%q, ...; pandas' to_json(orient=\"index\")): write one object per line (to_json(orient=\"records\", lines=True)) or a JSON list of records", top.keys[0]))
	}
	if columnsByRow(top) {
		return notSamples(fmt.Sprintf("a JSON object of columns, each keyed by row number (%s, ...; pandas' to_json(orient=\"columns\")): write one object per line (to_json(orient=\"records\", lines=True)) or a JSON list of records", strings.Join(top.keys[:min(len(top.keys), 4)], ", ")))
	}
	if top.first(statementKeys, "string") != "" && top.any(datasetRefs...) && !hasOutput(top, 0) {
		return notSamples(fmt.Sprintf("a dataset (fields %s: problems with answers, no completions), not a model's samples: give it as the dataset", strings.Join(top.keys[:min(len(top.keys), 8)], ", ")))
	}
	m := guessMapping(top)
	if m.Completion == "" && m.Correct == "" && m.List == "" {
		if !top.doc && !hasString(top, 0) {
			if top.cut {
				return notSamples(fmt.Sprintf("no text field among the first %d fields of the first record (%s, …), which goes on past the %s read to recognise a layout: if a later field holds the completion, map it (--map completion=FIELD, or the mapping form)",
					len(top.keys), strings.Join(top.keys[:min(len(top.keys), 8)], ", "), byteSize(SniffBytes)))
			}
			return notSamples(fmt.Sprintf("no field holds text (fields %s): not a samples file", strings.Join(top.keys[:min(len(top.keys), 8)], ", ")))
		}
	}
	if top.doc {
		return notSamples(fmt.Sprintf("a JSON document (fields %s) in no known layout: Reach reads documents only from Inspect, OpenCompass, EvalPlus, BigCodeBench, SkyThought, MathArena and wandb tables; write one JSON object per sample or per problem (JSONL) and map its fields", strings.Join(top.keys[:min(len(top.keys), 8)], ", ")))
	}
	return FormatMapped, m, nil
}

// evalResultsLayout tells EvalPlus's eval_results.json from BigCodeBench's, which share the top
// level ({"date", "eval": {task_id: [...]}}), by their entries' fields: base_status and plus_status,
// or status and details. Entries the head does not show are EvalPlus's; its reader looks at each
// entry and reads BigCodeBench's as well.
func evalResultsLayout(eval *shape) Format {
	if eval == nil || len(eval.keys) == 0 {
		return FormatEvalPlusResults
	}
	entry := eval.sub[eval.keys[0]]
	if entry.is("status", "string") && !entry.is("base_status") {
		return FormatBigCodeBench
	}
	return FormatEvalPlusResults
}

// numericKeys reports whether every key of s is a whole number ("0", "1", ...).
func numericKeys(s *shape) bool {
	if s == nil || len(s.keys) == 0 {
		return false
	}
	for _, k := range s.keys {
		if _, err := strconv.Atoi(k); err != nil {
			return false
		}
	}
	return true
}

// columnsByRow reports whether every field of s is an object keyed by row number: a table written
// column by column.
func columnsByRow(s *shape) bool {
	for _, k := range s.keys {
		if s.kind[k] != "object" || !numericKeys(s.sub[k]) {
			return false
		}
	}
	return len(s.keys) > 0
}

// pickLayout is classify for a file whose first bytes are head: when the record fits several known
// layouts and the reader of the first refuses the file's first record, the next that fits is tried
// (a reader that cannot tell on a head cut short keeps its layout).
func pickLayout(head []byte, file string, top *shape) (Format, *Mapping, error) {
	f, m, err := classify(top, file)
	if err != nil || f == FormatMapped {
		return f, m, err
	}
	cands := layoutsOf(top)
	if len(cands) < 2 {
		return f, nil, nil
	}
	for _, c := range cands {
		if c != "" && firstRecordReads(head, file, c) {
			return c, nil, nil
		}
	}
	return f, nil, nil // each refuses: the first's refusal is the one to show, at import
}

// errTrialDone stops a trial read at its first sample.
var errTrialDone = errors.New("first sample read")

// firstRecordReads reports whether format f's reader takes the file's first record (from head)
// without refusing one of its fields; false only for such a refusal before any sample.
func firstRecordReads(head []byte, file string, f Format) bool {
	err := Read(bytes.NewReader(head), file, f, nil, Options{OnSample: func(Sample) error { return errTrialDone }})
	var e *Error
	return !errors.As(err, &e) || e.Field == ""
}

// layoutRule recognises one tool's layout from a record's shape (format "" refuses the file as a
// results summary).
type layoutRule struct {
	format Format
	match  func(top *shape) bool
}

// layoutRules are the known layouts, the more specific first: a record may fit several (EvalPlus's
// and BigCodeBench's top levels are one), and the reader of the first that fits may still refuse
// the first record, when the next that fits is tried (pickLayout).
var layoutRules = []layoutRule{
	// Whole documents.
	{FormatInspect, func(top *shape) bool {
		return top.is("eval", "object") && (top.is("samples") || top.is("version") || top.is("plan"))
	}},
	{FormatWandbTable, isWandbTable},
	{FormatBigCodeBench, func(top *shape) bool {
		return top.is("eval", "object") && (top.is("hash") || top.is("date")) && evalResultsLayout(top.sub["eval"]) == FormatBigCodeBench
	}},
	{FormatEvalPlusResults, func(top *shape) bool { return top.is("eval", "object") && (top.is("hash") || top.is("date")) }},
	{FormatMathArena, func(top *shape) bool {
		// The first releases wrote it without indent (one line) and the conversations before the
		// grades, so a head cut inside them shows only messages: a list of conversations (lists),
		// where a chat dataset's messages are objects.
		return top.is("gold_answer") && (top.is("answers", "list") || top.is("correct", "list") || top.is("pass_at_1") ||
			top.is("messages", "list") && top.elem["messages"] == "list")
	}},
	{FormatSkyThought, func(top *shape) bool {
		return len(top.keys) > 0 && top.kind[top.keys[0]] == "object" &&
			top.sub[top.keys[0]].any("responses", "input_conversation", "token_usages", "_index")
	}},
	{FormatOpenCompass, func(top *shape) bool {
		return numericKeys(top) && top.kind[top.keys[0]] == "object" && top.sub[top.keys[0]].any("origin_prompt", "prediction")
	}},
	{FormatOpenCompass, func(top *shape) bool {
		return top.is("details", "list", "object") && !top.any("completion", "completions", "code", "generations")
	}},
	{FormatOpenCompass, func(top *shape) bool { return top.is("origin_prompt") && top.is("prediction") }},
	{"", func(top *shape) bool {
		return top.is("results", "object") && top.any("configs", "versions", "n-shot", "config_general", "config")
	}},
	// One record per problem or per sample.
	{FormatQwenEval, func(top *shape) bool {
		return top.is("code", "list") && (top.is("idx") || top.is("gt") || top.is("score") || top.is("pred"))
	}},
	{FormatLMEval, func(top *shape) bool { return top.is("doc_id") && top.is("resps", "list") }},
	{FormatLighteval, func(top *shape) bool {
		return top.is("doc", "object") && top.is("model_response", "object") ||
			top.is("predictions", "list") && top.any("example", "full_prompt") && top.is("gold")
	}},
	{FormatOpenAIBatch, func(top *shape) bool { return top.is("custom_id") && top.is("response", "object", "null") }},
	{FormatVLLM, func(top *shape) bool {
		return top.is("outputs", "list") && top.elem["outputs"] == "object" && top.sub["outputs"].is("text") && top.any("prompt", "request_id", "prompt_token_ids")
	}},
	{FormatNeMoSkills, func(top *shape) bool {
		return top.is("generation", "string") && top.any("symbolic_correct", "predicted_answer", "judgement", "num_generated_tokens",
			"expected_answer", "_full_generation", "is_correct")
	}},
	{FormatEvalscope, func(top *shape) bool {
		return top.is("sample_score", "object") && top.is("index") ||
			top.is("choices", "list") && top.is("raw_input", "object") && top.any("review_id", "reviewed", "answer_id")
	}},
	{FormatHFGenerations, func(top *shape) bool { return top.is("generations", "list") && top.any("problem", "question", "uuid") }},
	{FormatVerlGeneration, func(top *shape) bool {
		return top.is("responses", "list") && top.any("prompt", "reward_model", "data_source")
	}},
	{FormatVerlValidation, func(top *shape) bool {
		return top.is("input", "string") && top.is("output", "string") && top.any("gts", "score", "acc", "step")
	}},
	{FormatTRLCompletions, func(top *shape) bool {
		return top.is("prompt") && top.is("completion") && top.is("step") && !top.any("problem_id", "task_id")
	}},
	{FormatReachProblem, func(top *shape) bool { return top.is("problem_id") && top.is("completions", "list") }},
	{FormatReachSample, func(top *shape) bool { return top.is("problem_id") && (top.is("completion") || top.is("sample_index")) }},
	{FormatHumanEvalResults, func(top *shape) bool {
		return top.is("task_id") && (top.is("completion", "string") || top.is("solution", "string"))
	}},
}

// layoutsOf returns the layouts a record's shape fits, in layoutRules' order ("" for a results
// summary), each once.
func layoutsOf(top *shape) []Format {
	var out []Format
	for _, r := range layoutRules {
		if r.match(top) && !slices.Contains(out, r.format) {
			out = append(out, r.format)
		}
	}
	return out
}

// hasOutput reports whether a field at any depth has a name only model output has.
func hasOutput(s *shape, depth int) bool {
	if s == nil || depth > shapeDepth {
		return false
	}
	if s.any(outputKeys...) {
		return true
	}
	for _, k := range s.keys {
		if hasOutput(s.sub[k], depth+1) {
			return true
		}
	}
	return false
}

// hasString reports whether any field at any depth holds a string.
func hasString(s *shape, depth int) bool {
	if s == nil || depth > shapeDepth {
		return false
	}
	for _, k := range s.keys {
		if s.kind[k] == "string" || s.elem[k] == "string" || hasString(s.sub[k], depth+1) {
			return true
		}
	}
	return false
}

// guessMapping picks, in order of preference: a list of sample objects; a list of completion strings
// with parallel lists; one sample per line at the top level; one sample per line inside an object field.
func guessMapping(top *shape) *Mapping {
	m := &Mapping{ProblemID: escapeKey(top.first(idCands, "string", "number"))}
	if m.ProblemID == "" {
		m.Question = escapeKey(top.first(questionCands, "string"))
		if m.Question == "" {
			m.Prompt = escapeKey(top.first(promptCands, "string"))
		}
	}
	m.Reference = escapeKey(top.first(referenceCands, "string", "number"))
	perSample := func(s *shape, prefix string, completion bool) {
		pick := func(dst *string, cands []string, kinds ...string) {
			if *dst == "" {
				if c := s.find(cands, kinds, 2); c != "" {
					*dst = prefix + c
				}
			}
		}
		if completion {
			pick(&m.Completion, completionCand, "string")
		}
		pick(&m.Correct, correctCands, "bool", "number", "string")
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
			if s := top.sub[k]; s.find(completionCand, []string{"string"}, 2) != "" || s.find(correctCands, []string{"bool"}, 2) != "" {
				objList = k
			}
		}
		if strList == "" && top.elem[k] == "string" && slices.Contains(listCands, k) {
			strList = k
		}
	}
	switch {
	case objList != "":
		m.List = escapeKey(objList)
		perSample(top.sub[objList], "", true)
		parallel()
	case strList != "":
		m.List = escapeKey(strList)
		parallel()
	default:
		perSample(top, "", true)
		if m.Completion == "" && m.Correct == "" {
			for _, k := range top.keys {
				if top.kind[k] == "object" && top.sub[k].first(completionCand, "string") != "" {
					perSample(top.sub[k], escapeKey(k)+".", true)
					break
				}
			}
		}
	}
	if m.Completion != "" && (m.Completion == m.Question || m.Completion == m.Prompt) {
		m.Completion = ""
	}
	return m
}

// FieldPaths lists the fields of a file's first records as mapping paths, for the mapping page:
// top holds paths into the record at any depth (lists by themselves, "a.b.c"), items the paths
// inside the elements of the record's lists of objects (relative to an element).
func FieldPaths(head []byte, file string) (top, items []string) {
	sh, err := sniffShape(head, file, 0)
	if err != nil || sh.shape == nil {
		return nil, nil
	}
	return shapePaths(sh.shape)
}

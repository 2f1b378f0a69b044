package ingest

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Format names the layout of a samples file: which tool wrote it. The container (JSONL, a JSON
// document, parquet, an Inspect zip, gzip or zstd around any of them) is recognised from the bytes.
type Format string

const (
	// FormatQwenEval: the Qwen2.5-Math / SimpleRL / limit-of-RLVR evaluator output, one line per
	// problem: idx, question, gt, code (completions), score (verdicts), pred (extracted answers),
	// finish_reason (may be absent or shorter than code). ProblemKey = idx.
	FormatQwenEval Format = "qwen-eval"
	// FormatReachSample: one line per sample: problem_id, sample_index?, completion,
	// finish_reason?, completion_tokens?, correct?, extracted?.
	FormatReachSample Format = "reach-sample"
	// FormatReachProblem: one line per problem: problem_id, completions (strings, or objects with the
	// per-sample fields of FormatReachSample), and optional lists parallel to completions
	// (correct, extracted, finish_reason, completion_tokens) for string completions.
	FormatReachProblem Format = "reach-problem"
	// FormatHumanEvalResults: human-eval results and EvalPlus samples, one line per sample: task_id,
	// completion (or EvalPlus's solution), passed?, result? (result is kept as Sample.Reason).
	FormatHumanEvalResults Format = "humaneval-results"
	// FormatCountsCSV: per-problem counts, header problem_id,n,correct (or c).
	FormatCountsCSV Format = "counts-csv"
	// FormatMapped: any other layout, read through a Mapping.
	FormatMapped Format = "mapped"

	// FormatLMEval: lm-evaluation-harness --log_samples (samples_<task>_<date>.jsonl): doc_id, doc,
	// target, resps (one list of completions per request), filter. A document appears once per
	// filter; its completions are taken once (from its first filter). No per-sample verdicts.
	FormatLMEval Format = "lm-eval"
	// FormatLighteval: lighteval details, the current columns (doc, metric, model_response) or the
	// older ones (example, predictions, gold, metrics), as parquet or JSONL. No per-sample verdicts.
	FormatLighteval Format = "lighteval"
	// FormatInspect: an Inspect AI log, .eval (zip) or .json; each epoch of a sample is one sample.
	FormatInspect Format = "inspect"
	// FormatOpenCompass: OpenCompass predictions ({"0": {origin_prompt, prediction, gold}, ...}; with
	// repeats the dataset appears several times over) or results (details with per-sample correct).
	FormatOpenCompass Format = "opencompass"
	// FormatEvalPlusResults: EvalPlus eval_results.json ({"eval": {task_id: [{solution,
	// base_status, plus_status}]}}); a sample is correct when it passes the base and the plus tests.
	FormatEvalPlusResults Format = "evalplus-results"
	// FormatBigCodeBench: BigCodeBench eval_results.json ({"date", "eval": {task_id: [{task_id,
	// solution, status, details}]}}): EvalPlus's top level, one status per sample ("pass", "fail",
	// "timeout"), correct when "pass".
	FormatBigCodeBench Format = "bigcodebench-results"
	// FormatVerlValidation: verl validation generations (one line per sample: input, output, gts,
	// score, acc?, pred?, step). No problem id: matched to the dataset by the statement in the prompt.
	FormatVerlValidation Format = "verl-validation"
	// FormatVerlGeneration: verl main_generation output (the dataset's rows with a responses list),
	// parquet or JSONL; matched by the statement in the prompt.
	FormatVerlGeneration Format = "verl-generation"
	// FormatTRLCompletions: TRL's logged completions (completions_<step>.parquet or JSONL: step,
	// prompt, completion, reward columns); matched by the statement in the prompt.
	FormatTRLCompletions Format = "trl-completions"
	// FormatWandbTable: a wandb Table file (<key>_<step>_<hash>.table.json: {"columns", "data"}),
	// each row read as a record in the layout its columns show (TRL logs its completions so).
	FormatWandbTable Format = "wandb-table"
	// FormatOpenAIBatch: OpenAI Batch API output (custom_id, response.body.choices[]).
	FormatOpenAIBatch Format = "openai-batch"
	// FormatVLLM: vLLM RequestOutput objects saved as JSON (prompt, outputs[].text, finish_reason);
	// matched by the statement in the prompt.
	FormatVLLM Format = "vllm-output"
	// FormatHFGenerations: released generations on the Hugging Face hub (OpenR1-Math style: problem,
	// answer, generations[], correctness_*[], finish_reasons[], uuid), parquet or JSONL.
	FormatHFGenerations Format = "hf-generations"
	// FormatNeMoSkills: NeMo-Skills generation output (output-rs<seed>.jsonl): each line the
	// input row plus generation, num_generated_tokens, predicted_answer, symbolic_correct and/or
	// judgement; matched by the problem's text.
	FormatNeMoSkills Format = "nemo-skills"
	// FormatEvalscope: evalscope reviews (reviews/<model>/<dataset>_<subset>.jsonl): one line per
	// sample with sample_score (v1.0+), or per problem with choices (before); matched by text.
	FormatEvalscope Format = "evalscope-reviews"
	// FormatSkyThought: SkyThought results.json, {key: {row..., responses: [{content,
	// correctness, reason}], token_usages}}.
	FormatSkyThought Format = "skythought-results"
	// FormatMathArena: a MathArena run file, one problem's runs ({problem, gold_answer, answers,
	// correct, messages: one conversation per run}), .json or .json.zst.
	FormatMathArena Format = "matharena-runs"
	// FormatParquet: a parquet file whose layout is read from its schema at import (one of the
	// formats above, else an error listing its columns).
	FormatParquet Format = "parquet"
)

// Mapping says which fields of a long-tail file mean what. Paths follow gjson's syntax at any depth
// and into lists, and JSONPath spellings are translated (see path).
//
// With List == "" each record (line, row) is one sample and every path is looked up in the record.
// With List set each record is one problem: ProblemID, Question, Prompt and Reference are looked up
// in the record, the per-sample paths in each list item first and then in the record: a record value
// that is a list parallel to List gives one value per sample (as the Qwen evaluator's score is to
// code), any other applies to all samples. An item that is a plain string is the completion itself.
type Mapping struct {
	// ProblemID is e.g. "qid"; "" = match by Question/Prompt, else by the record's own question or
	// prompt field (question, problem, prompt, input, query, origin_prompt), else by its 0-based
	// position.
	ProblemID string
	// IDKind says what ProblemID holds: "" the dataset's id, else a 0-based position (today's rule
	// for files without ids); "id" the dataset's id only; "index0"/"index1" a 0-/1-based position.
	IDKind      string
	List        string  // per-problem list, e.g. "rollouts" or "response.body.choices"; "" = one record per sample
	Completion  string  // e.g. "text"; required in every sample when set
	Correct     string  // e.g. "correct"; "" = the file has no verdicts
	Threshold   float64 // > 0: Correct is a score, correct when >= Threshold
	Extracted   string  // e.g. "pred_token"
	SampleIndex string  // e.g. "rollout"; "" = order of appearance within the problem
	// FinishReason and Tokens: e.g. "finish_reason", "completion_tokens".
	FinishReason, Tokens string
	// Question is the problem statement as the file has it; Prompt a text that contains it (a
	// rendered prompt); Reference the reference answer. Each is checked against the dataset, and
	// Question or Prompt match records without ProblemID to dataset problems.
	Question, Prompt, Reference string
}

// KeyKind says how a Sample's ProblemKey names a dataset problem.
type KeyKind uint8

const (
	// KeyAuto: the dataset's id (unique_id, task_id, ...), else the 0-based position.
	KeyAuto   KeyKind = iota
	KeyID             // the dataset's id only
	KeyIndex0         // a 0-based position in the dataset
	KeyIndex1         // a 1-based position (Inspect numbers samples from 1)
	// KeyIDOrIndex1: the dataset's id, else a 1-based position (Inspect: string ids are the dataset's,
	// numbers its own count from 1); the candidate whose statement matches the sample's text wins.
	KeyIDOrIndex1
	// KeyCyclic: a 0-based position in the dataset repeated several times over (OpenCompass repeats),
	// i.e. position modulo the number of problems.
	KeyCyclic
	// KeyNone: no id; the sample's Question or Prompt names the problem by its statement.
	KeyNone
	// KeyRecord: the record has no id and no text naming its problem: its 0-based position among
	// the file's records is read as the dataset position (a file written in dataset order).
	KeyRecord
)

var keyKindNames = map[string]KeyKind{"": KeyAuto, "id": KeyID, "index0": KeyIndex0, "index1": KeyIndex1}

// Sample is one completion in canonical form.
type Sample struct {
	Line   int    // 1-based line of the file it came from; 0 when Record says where
	Record string // a record that is not a line: "row 12", "samples[3]", "samples/1_epoch_2.json"
	// ProblemKey is the problem's id as in the file (numbers as decimal text), read as KeyKind says;
	// "" with KeyNone.
	ProblemKey string
	KeyKind    KeyKind
	// SampleIndex is 0-based within the problem: the file's own index, or the order of appearance
	// (across all lines of the problem) when the file has none. A Matcher may renumber the latter.
	SampleIndex      int
	Completion       string
	FinishReason     string // "" if unknown; Inspect's max_tokens and similar are "length"
	CompletionTokens int    // 0 = unknown
	Correct          *bool  // the file's own verdict; nil when absent
	Extracted        string // the file's own extracted answer (pred, pred_token); "" if absent
	Reason           string // the file's own verdict reason (human-eval "result"); "" if absent
	// Question, Prompt and Reference are what the file says about the problem (see Mapping), shared
	// by the samples of one record; a Matcher checks them against the dataset.
	Question, Prompt, Reference string
	// Step is the training step the record carries (verl's validation dump and TRL's completions
	// write one per record); HasStep says whether it carried one.
	Step    int
	HasStep bool

	indexed bool // SampleIndex came from the file
	perLine bool // the record held a list of samples of one problem
}

// where says where the sample came from, for errors.
func (s *Sample) where(file string) where { return where{file: file, line: s.Line, record: s.Record} }

// Count is one problem's aggregate from a counts file: N samples, C of them correct (0 <= C <= N).
type Count struct {
	Line       int
	ProblemKey string
	N, C       int
}

// RunMeta is what the tool recorded about the run, as far as the file says; "" when it does not.
type RunMeta struct {
	Tool        string            `json:"tool,omitempty"` // e.g. "lm-evaluation-harness"
	ToolVersion string            `json:"tool_version,omitempty"`
	Model       string            `json:"model,omitempty"`
	Task        string            `json:"task,omitempty"`
	Date        string            `json:"date,omitempty"` // as the tool wrote it
	Settings    map[string]string `json:"settings,omitempty"`
}

// set records a setting once (the first value wins); the strings are copied, since they may alias
// a record's buffer.
func (m *RunMeta) set(k, v string) {
	if v == "" || v == "null" || k == "" {
		return
	}
	if m.Settings == nil {
		m.Settings = map[string]string{}
	}
	if _, ok := m.Settings[k]; !ok && len(m.Settings) < 64 {
		m.Settings[strings.Clone(k)] = strings.Clone(truncateText(v, 500))
	}
}

// setOnce sets *dst to a copy of v unless it is set.
func setOnce(dst *string, v string) {
	if *dst == "" && v != "" {
		*dst = strings.Clone(truncateText(v, 500))
	}
}

// truncateText cuts s to at most n bytes on a rune boundary, marking the cut.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Empty reports whether nothing was recorded.
func (m RunMeta) Empty() bool {
	return m.Tool == "" && m.ToolVersion == "" && m.Model == "" && m.Task == "" && m.Date == "" && len(m.Settings) == 0
}

// Warning is something read and changed, or doubtful, that did not stop the read.
type Warning struct {
	Code string // "nul-removed"
	Err  Error  // where, and what happened
}

// Options are ReadSamples' callbacks and limits.
type Options struct {
	OnSample func(Sample) error
	OnCount  func(Count) error
	// OnMeta receives what the tool recorded about the run, once, after the last sample.
	OnMeta func(RunMeta) error
	// OnWarning receives each warning: a completion with NUL characters (Postgres text cannot hold
	// them: they are removed, and each line that had them is reported).
	OnWarning func(Warning)
	Limits    Limits
	// CheckpointEvery > 0 makes a read of plain JSONL (see Splittable) call OnCheckpoint at the
	// start of the first line at or after each multiple of CheckpointEvery bytes (never at byte 0
	// nor at the end), once every sample of the lines before it was delivered: the state from which
	// Resume reads the rest. Other containers never call it.
	CheckpointEvery int64
	OnCheckpoint    func(ReadState) error
	// Resume, when set, reads a part of a plain JSONL file that begins at the line boundary where
	// OnCheckpoint gave this state, as the read of the whole file would have gone on from there
	// (line numbers, record positions, a format's memory of earlier records): r holds that part's
	// bytes only. It checks and reports nothing that needs the whole file (an empty file, the run's
	// metadata, the warnings are the whole read's business).
	Resume *ReadState
	// fieldsSeen, when set, collects the per-sample fields (bit fieldID) any sample had: CheckMapping
	// refuses a mapped path no record has.
	fieldsSeen *uint8
}

// maxSampleIndex bounds an explicit sample index, so the duplicate check stays a small bitset.
const maxSampleIndex = 1 << 20

// ReadSamples streams a samples file of format f (m is used only for FormatMapped). FormatCountsCSV
// calls onCount once per row; every other format calls onSample once per sample, in file order (a
// per-problem record's samples are delivered after the whole record is read). It is Read with the
// two callbacks and the default limits.
func ReadSamples(r io.Reader, file string, f Format, m *Mapping, onSample func(Sample) error, onCount func(Count) error) error {
	return Read(r, file, f, m, Options{OnSample: onSample, OnCount: onCount})
}

// Read streams a samples file of format f (m only for FormatMapped, and for FormatParquet with an
// unrecognised schema). The container is recognised from the bytes: gzip and zstd are decompressed
// as they are read; parquet and zip need random access: when r is not an io.ReaderAt with a
// Size() int64 method (an *os.File, *bytes.Reader, *io.SectionReader), they are first copied to a
// temporary file (at most Limits.MaxSpoolBytes).
//
// Memory: one record (at most Limits.MaxRecordBytes) plus the samples decoded from it, i.e. about
// twice the largest record (a JSONL line, a parquet row, an Inspect sample), plus per problem a
// counter and a bitset of sample indices; never the whole file.
//
// Errors: bad JSON, a missing or wrongly typed field, a record over the limits, invalid UTF-8, an
// empty file, a C > N count, a duplicate sample index within a problem, a problem repeated on a
// second per-problem line (or a duplicate problem in a CSV) stop the read with an *Error naming
// file, line (or record) and field. An error from a callback stops it and comes back wrapped with
// file and line (an *Error from a callback, e.g. a Matcher's, as it is); a failed read of r comes
// back wrapped. A wrong Format or Mapping is a plain error.
func Read(r io.Reader, file string, f Format, m *Mapping, o Options) error {
	o.Limits = o.Limits.withDefaults()
	if o.Resume != nil && !lineFormat(f) {
		return fmt.Errorf("ingest: %s cannot be read in parts", f)
	}
	var in *input
	if o.Resume == nil {
		var closer func()
		var err error
		if in, closer, err = openInput(r, file, o.Limits); err != nil {
			return err
		}
		defer closer()
	} else {
		in = &input{r: r}
	}
	if in.kind == kindCSV || f == FormatCountsCSV {
		if f != FormatCountsCSV {
			return &Error{File: file, Msg: fmt.Sprintf("a CSV file, not %s: a CSV must be per-problem counts (header problem_id,n,correct)", f)}
		}
		if o.OnCount == nil {
			return errors.New("ingest: counts-csv needs OnCount")
		}
		return readCounts(in.r, file, o.OnCount)
	}
	if o.OnSample == nil {
		return fmt.Errorf("ingest: %s needs OnSample", f)
	}
	if in.kind == kindParquet {
		return readParquet(in, file, f, m, o)
	}
	if in.kind == kindZip {
		if f != FormatInspect && f != FormatParquet {
			return &Error{File: file, Msg: fmt.Sprintf("a zip archive, not %s: the only zip Reach reads is an Inspect AI .eval log", f)}
		}
		return readInspectZip(in, file, o)
	}
	s, err := specFor(f, m)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err) // the caller's format or mapping: a plain error, naming the file it was for
	}
	sr := newSampleReader(s, file, o)
	if o.Resume != nil {
		return sr.resume(r, *o.Resume)
	}
	switch {
	case s.doc != nil:
		err = s.doc(sr, in.r)
	case in.kind == kindJSONArray:
		err = sr.readArray(in.r)
	default:
		err = sr.readLines(in.r)
	}
	if err == nil && s.end != nil {
		err = s.end(sr)
	}
	if err != nil {
		return err
	}
	return sr.finish()
}

// fieldID names a per-sample field.
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

var fieldNames = [nFields]string{"completion", "verdict", "extracted answer", "sample index", "finish reason", "token count", "reason"}

// spec is a Format (or Mapping) resolved to paths, plus the hooks of formats that need more.
type spec struct {
	format     Format
	id         paths
	idKind     KeyKind
	idOptional bool // a record without id is matched by its text (else: missing id is an error)
	list       paths
	single     bool // a string where the list is expected is one completion (OpenCompass with n = 1)
	// repeatable: a problem's samples may come on several records (OpenCompass writes the dataset
	// once per repeat), so a second record of a problem is not refused.
	repeatable bool
	f          [nFields]paths
	question   paths
	prompt     paths
	reference  paths
	threshold  float64
	// finishMap renames finish reasons to Reach's ("max_tokens" -> "length").
	finishMap map[string]string
	// hook runs first on each record: it may skip it (lm-eval's second filter) or refuse it.
	hook func(sr *sampleReader, w where, top []kv, rec string) (skip bool, err error)
	// meta collects run metadata from a record.
	meta func(sr *sampleReader, top []kv, rec string)
	// step is the record's training step field, for the layouts whose writers put one on every
	// record (StepFormats).
	step paths
	// doc reads a whole JSON document (Inspect .json, OpenCompass, EvalPlus results) instead of lines.
	doc func(sr *sampleReader, r io.Reader) error
	// end checks the whole file once read (not a part of it: see Options.Resume).
	end func(sr *sampleReader) error
}

func mappedSpec(m *Mapping) (spec, error) {
	if m == nil {
		return spec{}, errors.New("format mapped needs a Mapping")
	}
	s := spec{format: FormatMapped, threshold: m.Threshold}
	kind, ok := keyKindNames[m.IDKind]
	if !ok {
		return s, fmt.Errorf("mapping id kind %q: want id, index0 or index1 (or nothing)", m.IDKind)
	}
	s.idKind = kind
	if m.List == "" && m.Completion == "" && m.Correct == "" {
		return s, errors.New("mapping names neither a completion nor a verdict field")
	}
	if m.Threshold < 0 {
		return s, fmt.Errorf("mapping threshold %g: want a positive score", m.Threshold)
	}
	one := func(dst *paths, src, name string) error {
		if strings.TrimSpace(src) == "" {
			return nil
		}
		p, err := parsePath(src)
		if err != nil {
			return fmt.Errorf("mapping %s: %w", name, err)
		}
		*dst = paths{p}
		return nil
	}
	errs := []error{
		one(&s.id, m.ProblemID, "problem_id"), one(&s.list, m.List, "list"),
		one(&s.f[fCompletion], m.Completion, "completion"), one(&s.f[fCorrect], m.Correct, "correct"),
		one(&s.f[fExtracted], m.Extracted, "extracted"), one(&s.f[fIndex], m.SampleIndex, "sample_index"),
		one(&s.f[fFinish], m.FinishReason, "finish_reason"), one(&s.f[fTokens], m.Tokens, "tokens"),
		one(&s.question, m.Question, "question"), one(&s.prompt, m.Prompt, "prompt"), one(&s.reference, m.Reference, "reference"),
	}
	if err := errors.Join(errs...); err != nil {
		return s, err
	}
	if len(s.id) == 0 && m.IDKind != "" {
		return s, errors.New("mapping id kind given without a problem_id field")
	}
	return s, nil
}

// newSampleReader prepares a reader for spec s.
func newSampleReader(s spec, file string, o Options) *sampleReader {
	return &sampleReader{spec: s, file: file, o: o, probs: map[string]*probState{}}
}

type sampleReader struct {
	spec
	file   string
	o      Options
	probs  map[string]*probState
	top    []kv      // the current record's fields (reused)
	pend   []pending // the current record's samples, for formats that collect them first (reused)
	items0 []string  // the current record's list items (reused)
	meta   RunMeta
	seen   map[string]string // format hooks' memory (lm-eval: document -> its first filter)
	gate   door              // what the tool readers took as completions (toolreaders.go)
	n      int               // samples delivered
	empty  emptyCompletions
}

// pending is a sample read but not yet delivered: its index is assigned once the problem is known.
type pending struct {
	Sample
	has      uint8         // bit f set when field f was present (and not null)
	idxField func() string // where the explicit index came from, for errors
}

type probState struct {
	key   string   // the problem key, owned (a reader's key may alias its read buffer)
	n     int      // samples seen
	used  []uint64 // bitset of sample indices taken
	first where    // the first record of a per-problem file that named the problem
}

// readLines reads JSONL.
func (sr *sampleReader) readLines(r io.Reader) error {
	ls := newLineSource(r, sr.file, sr.o.Limits)
	return sr.lines(ls, 0)
}

// lines reads JSONL from ls, whose first byte is byte base of the file.
func (sr *sampleReader) lines(ls *lineSource, base int64) error {
	every, next := sr.o.CheckpointEvery, int64(0)
	if sr.o.OnCheckpoint == nil {
		every = 0
	}
	if every > 0 {
		next = (base/every + 1) * every
	}
	for {
		if every > 0 && base+ls.off >= next && ls.more() {
			if err := sr.o.OnCheckpoint(ReadState{Offset: base + ls.off, Line: ls.line, Records: ls.index + 1, Seen: maps.Clone(sr.seen)}); err != nil {
				return err
			}
			next = ((base+ls.off)/every + 1) * every
		}
		line, err := ls.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		w := where{file: sr.file, line: ls.line}
		if err := checkJSON(w, line, sr.o.Limits); err != nil {
			return err
		}
		if err := sr.record(w, ls.index, u2s(line)); err != nil {
			return err
		}
	}
	if ls.index < 0 && sr.o.Resume == nil {
		return &Error{File: sr.file, Msg: "empty file: no JSON lines"}
	}
	return nil
}

// finish reports the run's metadata, and refuses a file that held no samples at all.
func (sr *sampleReader) finish() error {
	if sr.n == 0 {
		return &Error{File: sr.file, Msg: "no samples in the file"}
	}
	if err := sr.checkEmpty(); err != nil {
		return err
	}
	if sr.o.OnMeta != nil && !sr.meta.Empty() {
		if sr.meta.Tool == "" {
			sr.meta.Tool = toolName(sr.format)
		}
		return sr.o.OnMeta(sr.meta)
	}
	return nil
}

// record turns one record (a JSON object) into samples and delivers them. index is its 0-based
// position among the file's records.
func (sr *sampleReader) record(w where, index int, rec string) error {
	return sr.keyedRecord(w, index, rec, recordCtx{})
}

// keyedRecord is record for a record whose problem id the container gives (OpenCompass's
// {"0": {...}}): rc.key is then set and the spec's id path is not used.
func (sr *sampleReader) keyedRecord(w where, index int, rec string, rc recordCtx) error {
	top, err := topFields(w, rec, sr.top[:0])
	sr.top = top
	if err != nil {
		return err
	}
	if sr.hook != nil {
		skip, err := sr.hook(sr, w, top, rec)
		if skip || err != nil {
			return err
		}
	}
	if sr.spec.meta != nil {
		sr.spec.meta(sr, top, rec)
	}
	if len(sr.spec.step) > 0 {
		if raw, p := sr.spec.step.in(top, rec); raw != "" && raw != "null" {
			if rc.step, err = stepValue(w, p.src, raw); err != nil {
				return err
			}
			rc.hasStep = true
		}
	}
	if rc.key == "" {
		rc.kind = sr.idKind
	}
	if len(sr.id) > 0 && rc.key == "" {
		raw, p := sr.id.in(top, rec)
		switch {
		case raw != "":
			if rc.key, err = w.key(p.src, raw); err != nil {
				return err
			}
			rc.idField = p.src
		case !sr.idOptional:
			return w.errorf(sr.id.String(), "missing problem id")
		}
	}
	for _, t := range []struct {
		ps  paths
		dst *string
	}{{sr.question, &rc.question}, {sr.prompt, &rc.prompt}, {sr.reference, &rc.reference}} {
		if raw, p := t.ps.in(top, rec); raw != "" {
			if t.dst == &rc.reference && kindOf(raw) == "list" {
				*t.dst = strings.Clone(raw) // accepted answers: the Matcher takes any (referenceForms)
				continue
			}
			if *t.dst, err = w.text(p.src, raw); err != nil {
				return err
			}
		}
	}
	if rc.key == "" {
		if rc.question != "" || rc.prompt != "" {
			rc.kind = KeyNone
		} else {
			// No id, and the layout (or mapping) names no text: a field that holds the problem's
			// text still says which problem it is, more surely than the record's position, which
			// the Matcher uses only when there is no such text.
			rc.question, rc.prompt = ownText(rec)
			rc.key, rc.kind = strconv.Itoa(index), KeyRecord
		}
	}
	if len(sr.list) == 0 {
		p, err := sr.sample(w, top, rec, "", "", -1, -1, nil)
		if err != nil {
			return err
		}
		return sr.deliver(w, &rc, &p, 0)
	}
	if err := sr.begin(w, &rc, true); err != nil {
		return err
	}
	return sr.items(w, top, rec, &rc)
}

// ownText returns a record's own question or prompt text: the first of its top-level fields named
// like a statement (questionCands) or a prompt (promptCands) that holds a string, or a chat (a list
// of messages with content, whose contents are joined).
func ownText(rec string) (question, prompt string) {
	for _, c := range questionCands {
		if v := gjson.Get(rec, escapeKey(c)); v.Type == gjson.String && informative(v.Str) {
			return strings.Clone(v.Str), ""
		}
	}
	for _, c := range promptCands {
		v := gjson.Get(rec, escapeKey(c))
		if v.Type == gjson.String && informative(v.Str) {
			return "", strings.Clone(v.Str)
		}
		if v.IsArray() {
			var parts []string
			for _, m := range v.Array() {
				if t := m.Get("content"); t.Type == gjson.String {
					parts = append(parts, t.Str)
				} else if t := m.Get("prompt"); t.Type == gjson.String {
					parts = append(parts, t.Str)
				}
			}
			if t := strings.Join(parts, "\n"); informative(t) {
				return "", t
			}
		}
	}
	return "", ""
}

type recordCtx struct {
	key, idField                string
	kind                        KeyKind
	question, prompt, reference string
	step                        int
	hasStep                     bool
}

// rootVal is a per-sample field's value in the record itself, for list items that lack it.
type rootVal struct {
	raw   string
	p     path
	elems []string // the list's elements when the value is a list parallel to the samples
}

// items reads a per-problem record's list of samples, delivering each as soon as it is read, so
// that only one decoded completion (beside the record itself) need be in memory.
func (sr *sampleReader) items(w where, top []kv, rec string, rc *recordCtx) error {
	raw, lp := sr.list.in(top, rec)
	if raw == "" {
		return w.errorf(sr.list.String(), "missing list of samples")
	}
	if k := kindOf(raw); k == "string" && sr.single {
		p, err := sr.sample(w, top, rec, raw, lp.src, -1, 0, &[nFields]*rootVal{})
		if err != nil {
			return err
		}
		p.perLine = !sr.repeatable
		return sr.deliver(w, rc, &p, 0)
	} else if k != "list" {
		return w.errorf(lp.src, "want a list, got %s", k)
	}
	sr.items0 = sr.items0[:0]
	_ = scanArray(raw, func(_ int, v string) error { sr.items0 = append(sr.items0, v); return nil })
	n := len(sr.items0)
	var roots [nFields]*rootVal
	for f, ps := range sr.f {
		for _, p := range ps {
			if p.item || p.g == lp.g {
				continue
			}
			v := p.in(top, rec)
			if v == "" || v == "null" {
				continue
			}
			rv := &rootVal{raw: v, p: p}
			if kindOf(v) == "list" {
				_ = scanArray(v, func(_ int, e string) error { rv.elems = append(rv.elems, e); return nil })
				if len(rv.elems) > n || (fieldID(f) == fCorrect && len(rv.elems) != n) {
					return w.errorf(p.src, "has %d entries, %s has %d", len(rv.elems), lp.src, n)
				}
			} else if fieldID(f) == fCorrect || fieldID(f) == fIndex {
				return w.errorf(p.src, "want a list parallel to %s, got %s", lp.src, kindOf(v))
			}
			roots[f] = rv
			break
		}
	}
	for i, item := range sr.items0 {
		p, err := sr.sample(w, top, rec, item, lp.src, i, i, &roots)
		if err != nil {
			return err
		}
		p.perLine = !sr.repeatable
		if err := sr.deliver(w, rc, &p, i); err != nil {
			return err
		}
	}
	clear(sr.items0)
	return nil
}

// fieldRef names where a value came from, built into text only for a message: Sprintf on every
// value of every sample would cost more than reading it.
type fieldRef struct {
	list     string // the list of samples, for a value in one of its items
	at       int    // the item's position (-1: the list is a single string)
	src      string // the path, in the item or in the record
	elem     int    // for a value in a list parallel to the samples, its position; else -1
	fromItem bool
}

func (f fieldRef) String() string {
	var s string
	if f.fromItem {
		s = f.list
		if f.at >= 0 {
			s = fmt.Sprintf("%s[%d]", f.list, f.at)
		}
		if f.src != "" {
			s += "." + f.src
		}
		return s
	}
	if f.elem >= 0 {
		return fmt.Sprintf("%s[%d]", f.src, f.elem)
	}
	return f.src
}

// sample reads one sample: from the record (item == "", i < 0), or from list item i of it, whose
// place for messages is list[at] (at < 0: the list itself, a single item).
func (sr *sampleReader) sample(w where, top []kv, rec, item, list string, at, i int, roots *[nFields]*rootVal) (pending, error) {
	var p pending
	itemRef := fieldRef{list: list, at: at, elem: -1, fromItem: true}
	if i >= 0 {
		switch k := kindOf(item); k {
		case "string":
			p.Completion = unquote(item)
			p.has |= 1 << fCompletion
		case "object":
		default:
			return p, w.errorf(itemRef.String(), "want a completion (string) or a sample (object), got %s", k)
		}
	}
	for f, ps := range sr.f {
		if len(ps) == 0 || p.has&(1<<f) != 0 {
			continue
		}
		var raw string
		var field fieldRef
		if i < 0 {
			r, pp := ps.in(top, rec)
			raw, field = r, fieldRef{src: pp.src, elem: -1}
		} else {
			if r, pp := ps.at(item); r != "" {
				raw, field = r, fieldRef{list: list, at: at, src: pp.src, elem: -1, fromItem: true}
			} else if rv := roots[f]; rv != nil {
				switch {
				case rv.elems == nil:
					raw, field = rv.raw, fieldRef{src: rv.p.src, elem: -1}
				case i < len(rv.elems):
					raw, field = rv.elems[i], fieldRef{src: rv.p.src, elem: i}
				}
			}
		}
		if raw == "" || raw == "null" {
			if fieldID(f) == fCompletion {
				miss := ps.String()
				if i >= 0 {
					ref := itemRef
					ref.src = ps[0].src
					miss = ref.String()
				}
				return p, w.errorf(miss, "missing completion")
			}
			continue
		}
		if err := sr.set(w, &p, fieldID(f), field, raw); err != nil {
			return p, err
		}
	}
	return p, nil
}

// set stores one per-sample value into p.
func (sr *sampleReader) set(w where, p *pending, f fieldID, field fieldRef, raw string) error {
	var err error
	switch f { // field names are built only when there is an error to name one in
	case fCompletion:
		p.Completion, err = w.str("", raw)
	case fCorrect:
		p.Correct, err = w.verdict("", raw, sr.threshold)
	case fExtracted:
		p.Extracted, err = w.text("", raw)
	case fIndex:
		if p.SampleIndex, err = w.count("", raw); err == nil && p.SampleIndex >= maxSampleIndex {
			err = w.errorf("", "sample index %d too large (max %d)", p.SampleIndex, maxSampleIndex-1)
		}
		p.idxField, p.indexed = field.String, true
	case fFinish:
		p.FinishReason, err = w.text("", raw)
		if to, ok := sr.finishMap[p.FinishReason]; ok {
			p.FinishReason = to
		}
	case fTokens:
		p.CompletionTokens, err = w.count("", raw)
	case fReason:
		p.Reason, err = w.text("", raw)
	}
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Field = field.String() + e.Field // a list's element comes back as "[i]"
		}
		return err
	}
	p.has |= 1 << f
	return nil
}

func (p *pending) fieldOfIndex() string {
	if p.idxField == nil {
		return ""
	}
	return p.idxField()
}

// emit delivers the samples in sr.pend, all of one record (document formats).
func (sr *sampleReader) emit(w where, rc recordCtx) error {
	defer func() { clear(sr.pend); sr.pend = sr.pend[:0] }()
	if err := sr.begin(w, &rc, len(sr.list) > 0); err != nil {
		return err
	}
	for i := range sr.pend {
		if err := sr.deliver(w, &rc, &sr.pend[i], i); err != nil {
			return err
		}
	}
	return nil
}

// begin refuses a problem repeated on a second per-problem record.
func (sr *sampleReader) begin(w where, rc *recordCtx, perProblem bool) error {
	if st := sr.probs[rc.key]; perProblem && !sr.repeatable && rc.key != "" && st != nil {
		return w.errorf(rc.idField, "problem %q is repeated: its samples were already on %s (a per-problem file has one record per problem)", rc.key, st.first.pos())
	}
	return nil
}

// deliver gives sample p (the i-th of its record) its index within the problem, refuses a duplicate
// index, removes NUL characters, and hands it to OnSample.
func (sr *sampleReader) deliver(w where, rc *recordCtx, p *pending, i int) error {
	if rc.key != "" {
		st := sr.probs[rc.key]
		if st == nil {
			st = &probState{key: strings.Clone(rc.key), first: w}
			sr.probs[st.key] = st
		}
		rc.key = st.key
		if !p.indexed {
			p.SampleIndex = st.n
		}
		wd, bit := p.SampleIndex/64, uint64(1)<<(p.SampleIndex%64)
		if wd < len(st.used) && st.used[wd]&bit != 0 {
			return w.errorf(p.fieldOfIndex(), "duplicate sample index %d for problem %q", p.SampleIndex, rc.key)
		}
		for wd >= len(st.used) {
			st.used = append(st.used, 0)
		}
		st.used[wd] |= bit
		st.n++
	} else if !p.indexed {
		p.SampleIndex = i
	}
	sr.stripNUL(w, &p.Sample)
	sr.empty.note(w, p)
	if sr.o.fieldsSeen != nil {
		*sr.o.fieldsSeen |= p.has
	}
	p.Line, p.Record, p.ProblemKey, p.KeyKind = w.line, w.record, rc.key, rc.kind
	p.Question, p.Prompt, p.Reference = rc.question, rc.prompt, rc.reference
	p.Step, p.HasStep = rc.step, rc.hasStep
	sr.n++
	if err := sr.o.OnSample(p.Sample); err != nil {
		var e *Error
		if errors.As(err, &e) { // the caller found the file at fault (a Matcher): it names the place
			return err
		}
		return fmt.Errorf("%s: %w", w.at(), err)
	}
	return nil
}

// at renders a location for wrapped errors: "file:line" or "file: record".
func (w where) at() string {
	switch {
	case w.line > 0 && w.record != "":
		return fmt.Sprintf("%s:%d: %s", w.file, w.line, w.record)
	case w.line > 0:
		return fmt.Sprintf("%s:%d", w.file, w.line)
	case w.record != "":
		return w.file + ": " + w.record
	}
	return w.file
}

// pos renders a location within the file: "line 3", "samples[2]".
func (w where) pos() string {
	if w.line > 0 {
		return fmt.Sprintf("line %d", w.line)
	}
	return w.record
}

// stripNUL removes NUL characters from a sample's texts (Postgres text cannot hold them) and
// reports each record that had any as a warning.
func (sr *sampleReader) stripNUL(w where, s *Sample) {
	n := 0
	for _, p := range []*string{&s.Completion, &s.Extracted, &s.FinishReason, &s.Reason} {
		if c := strings.Count(*p, "\x00"); c > 0 {
			n += c
			*p = strings.ReplaceAll(*p, "\x00", "")
		}
	}
	if n > 0 && sr.o.OnWarning != nil {
		sr.o.OnWarning(Warning{Code: "nul-removed", Err: *w.errorf("", "removed %d NUL character(s) (\\u0000) from a sample: Postgres text cannot hold them", n)})
	}
}

package ingest

import (
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"unicode"

	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// MatchProblem is a dataset problem as a Matcher needs it.
type MatchProblem struct {
	Key       string // the dataset's id (unique_id, task_id, ...); "" when it has none
	Statement string
	Reference string // the reference answer
	Solution  string // a reference solution text (MATH's solution, HumanEval's canonical_solution), if any
}

// Matcher finds the dataset problem of each sample of one file and checks that the file is about
// this dataset. It is the single place where a samples file meets its dataset:
//
//   - By id: a sample's ProblemKey is read as its KeyKind says (the dataset's id, a 0- or 1-based
//     position, a position in a dataset repeated several times); when the sample also carries text
//     (Question, or a Prompt containing the statement), the text must match the problem found,
//     else the file is refused naming the first line that differs. Without text, a Reference the
//     sample carries must equal the problem's (per the equal function given).
//   - By statement: a sample without id (verl, TRL, vLLM dumps) is matched by its Question, or by
//     the one dataset statement found inside its Prompt (whitespace normalised); none or several is
//     an error.
//   - The way the first sample matched holds for the whole file: a file whose first lines match by
//     position and later ones only by id is refused, not mixed.
//
// It also renumbers samples within each problem (samples without the file's own index get the
// order of appearance), refuses a duplicate index and a problem spread over two per-problem lines,
// and refuses completions that are not model output: the problem's own statement or reference
// solution, the prompt, or one text repeated on every sample.
type Matcher struct {
	file     string
	probs    []MatchProblem
	norm     []string       // normalised statements
	byKey    map[string]int // dataset id -> position
	byNorm   map[string]int // normalised statement -> position (-1: several problems share it)
	anchors  map[string][]int
	short    []int          // statements shorter than anchorLen
	cache    map[uint64]int // normalised prompt -> position, -1 none, -2 several
	seed     maphash.Seed
	equal    func(ref, fileRef string) bool
	lastText string // the last sample's text and its normalised form: a record's samples share one
	lastNorm string
	mode     string // how the first sample matched: "id", "position", "1-based position", "statement", ...
	modeAt   string // where
	state    []probMatch
	checked  int // samples seen by the completion checks
	echoes   int // completions equal to their problem's statement or solution, or their prompt
	echoAt   []string
	constant string // the completion of every sample so far (while they are all equal)
	varied   bool
	problems int // problems with samples
	noGuard  bool
	pooled   bool // several files of one model: indices renumbered per problem (NextFile)
}

// NextFile makes m read file next, one of several files of the same model (one per seed, per
// repeat, per problem): the files' samples are pooled per problem and renumbered in the order
// read, so a problem may have samples in several files; a sample index repeated within one file,
// or a problem on two per-problem records of one file, is still refused. Counts go on across
// files. Call it before each file, the first included.
func (m *Matcher) NextFile(file string) {
	m.file, m.pooled = file, true
	for i := range m.state {
		st := &m.state[i]
		clear(st.used)
		st.first, st.line = "", false
	}
}

// GuardCompletions turns the checks that a completion is model output (not the problem's
// statement, reference solution, prompt or one constant text) on or off; they are on by default.
// Turn them off for a tool's known layout, whose completion field is right by construction and
// where a model that wrote nothing leaves exactly the prompt (EvalPlus's solution = prompt +
// completion); keep them for a mapping, which may name the wrong field.
func (m *Matcher) GuardCompletions(on bool) { m.noGuard = !on }

type probMatch struct {
	n     int
	used  []uint64 // sample indices taken (in this file, when pooling)
	first string   // the record a per-problem record's samples came from
	line  bool     // the samples came from a per-problem record
	text  string   // the problem's first completion, while all of its samples are equal
	same  bool
}

// anchorLen is the length of the statement prefix used to find statements inside prompts.
const anchorLen = 12

// NewMatcher prepares matching samples of file against the problems of a dataset, in dataset
// order. equal compares a dataset reference with the file's; nil compares them as the math
// verifier does (texts equal with white space and a trailing ".0" ignored, or equivalent answers).
// A file's reference that is a list (a JSON list, or the Python text of one) matches when any
// element does.
func NewMatcher(file string, problems []MatchProblem, equal func(ref, fileRef string) bool) *Matcher {
	m := &Matcher{file: file, probs: problems, byKey: make(map[string]int, len(problems)), byNorm: make(map[string]int, len(problems)),
		anchors: map[string][]int{}, cache: map[uint64]int{}, seed: maphash.MakeSeed(), equal: equal,
		norm: make([]string, len(problems)), state: make([]probMatch, len(problems))}
	if m.equal == nil {
		// The verifier's equivalence: a tool writes a reference in its own normal form ("0.5" for
		// "\frac{1}{2}"), which the same answer must match.
		m.equal = func(a, b string) bool { return normRef(a) == normRef(b) || vmath.VerifyAnswer(a, b, false).IsCorrect() }
	}
	for i, p := range problems {
		if p.Key != "" {
			m.byKey[p.Key] = i
		}
		n := normText(p.Statement)
		m.norm[i] = n
		if _, dup := m.byNorm[n]; dup {
			m.byNorm[n] = -1
		} else {
			m.byNorm[n] = i
		}
		if len(n) < anchorLen {
			m.short = append(m.short, i)
		} else {
			m.anchors[n[:anchorLen]] = append(m.anchors[n[:anchorLen]], i)
		}
	}
	return m
}

// normText collapses white space runs to one space and trims, so a statement matches its copy in
// a prompt whatever the line breaks.
func normText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range strings.TrimSpace(s) {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

func normRef(s string) string {
	s = strings.Join(strings.Fields(s), "")
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return s
}

// Resolve returns the position in the dataset of s's problem, and sets s.SampleIndex to the
// sample's final index within it. Errors are *Error naming the sample's line (or record).
func (m *Matcher) Resolve(s *Sample) (int, error) {
	w := s.where(m.file)
	text := s.Question
	if !informative(text) {
		text = s.Prompt
	}
	if !informative(text) {
		text = "" // "..." or a blank: the file says nothing about the problem
	}
	var cands []cand
	key := s.ProblemKey
	pos := func(base int) (int, bool) {
		n, err := strconv.Atoi(key)
		if err != nil || n-base < 0 || n-base >= len(m.probs) {
			return 0, false
		}
		return n - base, true
	}
	addID := func() {
		if p, ok := m.byKey[key]; ok {
			cands = append(cands, cand{"id", p})
		}
	}
	addPos := func(base int, mode string) {
		if p, ok := pos(base); ok {
			cands = append(cands, cand{mode, p})
		}
	}
	switch s.KeyKind {
	case KeyAuto:
		addID()
		addPos(0, "position")
	case KeyID:
		addID()
	case KeyIndex0:
		addPos(0, "position")
	case KeyRecord: // the record's position, when it has no text to be matched by
		if text == "" {
			addPos(0, "record position")
		}
	case KeyIndex1:
		addPos(1, "1-based position")
	case KeyIDOrIndex1:
		addID()
		addPos(1, "1-based position")
	case KeyCyclic:
		if n, err := strconv.Atoi(key); err == nil && n >= 0 && len(m.probs) > 0 {
			cands = append(cands, cand{"position (repeated dataset)", n % len(m.probs)})
		}
	}
	var mismatch *cand
	found := -1
	for i, c := range cands {
		if m.mode != "" && c.mode != m.mode {
			continue
		}
		ok := true
		switch {
		case text != "":
			ok = m.textMatches(text, c.pos)
		case s.Reference != "" && m.probs[c.pos].Reference != "":
			ok = m.sameReference(m.probs[c.pos].Reference, s.Reference)
		}
		if ok {
			found = c.pos
			m.lock(c.mode, w)
			break
		}
		if mismatch == nil {
			mismatch = &cands[i]
		}
	}
	if found < 0 && text != "" && (m.mode == "" || m.mode == "statement") {
		p, err := m.byStatement(w, s, text)
		if err != nil && mismatch == nil {
			return 0, err
		}
		if err == nil {
			found = p
			m.lock("statement", w)
		}
	}
	if found < 0 {
		return 0, m.notFound(w, s, text, key, cands, mismatch)
	}
	if err := m.place(w, s, found); err != nil {
		return 0, err
	}
	return found, m.checkCompletion(w, s, found)
}

// sameReference reports whether the file's reference, in any of the forms its tool writes (see
// referenceForms), is the dataset's.
func (m *Matcher) sameReference(ref, fileRef string) bool {
	for _, f := range referenceForms(fileRef) {
		if m.equal(ref, f) {
			return true
		}
	}
	return false
}

func (m *Matcher) lock(mode string, w where) {
	if m.mode == "" {
		m.mode, m.modeAt = mode, w.pos()
	}
}

// normalised is normText(text), remembered for the next call: the samples of one record share
// their text.
func (m *Matcher) normalised(text string) string {
	if text != m.lastText {
		m.lastText, m.lastNorm = text, normText(text)
	}
	return m.lastNorm
}

// informative reports whether a text has a letter or digit: "..." elides, it does not state.
func informative(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// textMatches: the file's text is the statement, contains it (a prompt), or is contained in it.
func (m *Matcher) textMatches(text string, p int) bool {
	nt, ns := m.normalised(text), m.norm[p]
	return nt == ns || strings.Contains(nt, ns) || (len(nt) >= 20 && strings.Contains(ns, nt))
}

// byStatement finds the one problem whose statement is the text or is inside it.
func (m *Matcher) byStatement(w where, s *Sample, text string) (int, error) {
	nt := m.normalised(text)
	if p, ok := m.byNorm[nt]; ok {
		if p < 0 {
			return 0, w.errorf("", "several dataset problems have the statement %.80q: the file cannot say which one", nt)
		}
		return p, nil
	}
	h := maphash.String(m.seed, nt)
	if p, ok := m.cache[h]; ok {
		return m.cached(w, p, nt)
	}
	found := -1
	consider := func(p int) {
		switch {
		case found == -2 || p == found:
		case found < 0:
			found = p
		case strings.Contains(m.norm[p], m.norm[found]): // one statement inside a longer one: the longer
			found = p
		case !strings.Contains(m.norm[found], m.norm[p]):
			found = -2
		}
	}
	for _, p := range m.short {
		if m.norm[p] != "" && strings.Contains(nt, m.norm[p]) {
			consider(p)
		}
	}
	for i := 0; i+anchorLen <= len(nt) && found != -2; i++ {
		for _, p := range m.anchors[nt[i:i+anchorLen]] {
			if strings.HasPrefix(nt[i:], m.norm[p]) {
				consider(p)
			}
		}
	}
	if len(m.cache) < 1<<20 {
		m.cache[h] = found
	}
	return m.cached(w, found, nt)
}

func (m *Matcher) cached(w where, p int, nt string) (int, error) {
	switch p {
	case -1:
		return 0, w.errorf("", "matched by text (the file has no problem id): none of the dataset's %d problem statements is in the sample's question or prompt, white space ignored (the text: %.100q): is this the right dataset, or is the statement changed by the prompt template?", len(m.probs), nt)
	case -2:
		return 0, w.errorf("", "the sample's text contains the statements of several dataset problems (%.100q): it cannot be matched", nt)
	}
	return p, nil
}

// cand is a problem a sample's id may name, and how.
type cand struct {
	mode string
	pos  int
}

func (m *Matcher) notFound(w where, s *Sample, text, key string, cands []cand, mismatch *cand) error {
	switch {
	case mismatch != nil && text != "":
		return w.errorf("", "the file's problem %q is the dataset's record %d (counting from 1; matched by %s), but its text differs: the file has %.80q, the dataset %.80q (is this the right dataset?)",
			key, mismatch.pos+1, mismatch.mode, normText(text), m.norm[mismatch.pos])
	case mismatch != nil:
		return w.errorf("", "the file's problem %q is the dataset's record %d (counting from 1; matched by %s), but its reference answer differs: the file has %q, the dataset %q (is this the right dataset?)",
			key, mismatch.pos+1, mismatch.mode, s.Reference, m.probs[mismatch.pos].Reference)
	case m.mode != "" && len(cands) > 0:
		return w.errorf("", "problem %q matches the dataset only by %s, but earlier samples matched by %s (from %s): the file mixes two ways of naming problems", key, cands[0].mode, m.mode, m.modeAt)
	case s.KeyKind == KeyRecord && text == "":
		return w.errorf("", "the record names no problem: it has no problem id and no question or prompt text (fields looked for: %s), so its position was read as the dataset's (record %s, 0-based, of a dataset of %d problems), and that does not fit: map the field that holds the problem id (problem_id=...) or its prompt (prompt=...)",
			strings.Join(append(append([]string{}, questionCands...), promptCands...), ", "), key, len(m.probs))
	case key != "":
		return w.errorf("problem id", "problem %q is not in the dataset (%d problems; %s)", key, len(m.probs), keyKindHelp(s.KeyKind))
	}
	return w.errorf("", "the sample names no problem: no id, no question or prompt")
}

func keyKindHelp(k KeyKind) string {
	switch k {
	case KeyID:
		return "matched by the dataset's id"
	case KeyIndex0:
		return "read as a 0-based position"
	case KeyRecord:
		return "no id or text: the record's position read as the dataset's"
	case KeyIndex1:
		return "read as a 1-based position"
	case KeyIDOrIndex1:
		return "matched by the dataset's id, then as a 1-based position"
	case KeyCyclic:
		return "read as a position in the dataset repeated"
	}
	return "matched by the dataset's id, then as a 0-based position"
}

// place gives the sample its index within the problem.
func (m *Matcher) place(w where, s *Sample, p int) error {
	st := &m.state[p]
	rec := w.pos()
	if st.n == 0 {
		m.problems++
		st.first, st.line, st.same = rec, s.perLine, true
	} else if st.first == "" { // the problem's first record in this file (NextFile)
		st.first, st.line = rec, s.perLine
	} else if s.perLine && st.line && st.first != rec {
		return w.errorf("", "dataset problem %d (%.60q) is on two records of a per-problem file (%s and %s): a repeated record would count its samples twice",
			p+1, m.norm[p], st.first, rec)
	}
	if !s.indexed {
		s.SampleIndex = st.n
	}
	wd, bit := s.SampleIndex/64, uint64(1)<<(s.SampleIndex%64)
	if wd < len(st.used) && st.used[wd]&bit != 0 {
		return w.errorf("", "duplicate sample index %d for dataset problem %d (%.60q)", s.SampleIndex, p+1, m.norm[p])
	}
	for wd >= len(st.used) {
		st.used = append(st.used, 0)
	}
	st.used[wd] |= bit
	if m.pooled { // pooled files: the index within the file was checked; the model's is the order read
		s.SampleIndex = st.n
	}
	st.n++
	return nil
}

// checkCompletion refuses completions that are the problem itself rather than model output. It
// compares raw texts where it can: normalising every completion would cost more than reading it.
func (m *Matcher) checkCompletion(w where, s *Sample, p int) error {
	if m.noGuard {
		return nil
	}
	c := s.Completion
	st := &m.state[p]
	if st.n == 1 {
		st.text = c
	} else if st.same && st.text != c {
		st.same, st.text = false, ""
	}
	if strings.TrimSpace(c) == "" {
		return nil
	}
	m.checked++
	if m.checked == 1 {
		m.constant = c
	} else if !m.varied && c != m.constant {
		m.varied, m.constant = true, ""
	}
	echo := ""
	for _, t := range []struct{ what, text string }{{"the problem's statement", m.probs[p].Statement},
		{"the dataset's reference solution", m.probs[p].Solution}, {"the prompt", s.Prompt}, {"the question", s.Question}} {
		if t.text != "" && sameText(c, t.text) {
			echo = t.what
			break
		}
	}
	if echo != "" {
		m.echoes++
		if len(m.echoAt) < 3 {
			m.echoAt = append(m.echoAt, w.pos())
		}
		if m.echoes == m.checked && m.echoes >= 3 {
			return w.errorf("completion", "the completion is %s on every sample so far (%s): that field is not model output; map the completion field", echo, strings.Join(m.echoAt, ", "))
		}
	}
	if !m.varied && m.checked >= 50 && m.problems >= 2 {
		return w.errorf("completion", "the first %d samples, of %d problems, have one and the same completion (%.60q): that field is a constant, not model output", m.checked, m.problems, c)
	}
	return nil
}

// sameText reports whether a and b are equal with white space normalised, normalising only when
// their lengths allow it.
func sameText(a, b string) bool {
	if a == b {
		return true
	}
	la, lb := len(a), len(b)
	if la > 2*lb+64 || lb > 2*la+64 {
		return false
	}
	return normText(a) == normText(b)
}

// Finish runs the checks that need the whole file: completions that are mostly the problems'
// statements or solutions, one text on every sample, or each problem's samples all equal to a text
// holding its statement (a prompt read as the completion).
func (m *Matcher) Finish() error {
	w := where{file: m.file}
	switch {
	case m.noGuard:
		return nil
	case m.checked == 0:
		return nil
	case m.echoes*2 > m.checked:
		return w.errorf("completion", "%d of %d completions are the problem's statement, its reference solution or the prompt (%s, ...): that field is not model output", m.echoes, m.checked, strings.Join(m.echoAt, ", "))
	case !m.varied && m.checked >= 4 && m.problems >= 2:
		return w.errorf("completion", "all %d samples have one and the same completion (%.60q): that field is a constant, not model output", m.checked, normText(m.constant))
	}
	prompts, multi := 0, 0
	for p, st := range m.state {
		if st.n < 2 {
			continue
		}
		multi++
		if st.same && strings.Contains(normText(st.text), m.norm[p]) {
			prompts++
		}
	}
	if multi >= 2 && prompts == multi {
		return w.errorf("completion", "on every problem all samples share one text that contains the problem's statement: the field read as the completion is the prompt")
	}
	return nil
}

// Counts returns how many samples each dataset problem received, in dataset order.
func (m *Matcher) Counts() []int {
	out := make([]int, len(m.state))
	for i, st := range m.state {
		out[i] = st.n
	}
	return out
}

// String names the way the file's samples matched the dataset ("by id", "by statement", ...).
func (m *Matcher) String() string {
	if m.mode == "" {
		return "nothing matched yet"
	}
	return fmt.Sprintf("by %s", m.mode)
}

// MatchState is what a Matcher has learnt by a point of a file that the matching of the rest
// depends on: how the samples match the dataset, and how many samples each problem has so far
// (the next index of a sample without one).
type MatchState struct {
	Mode   string      `json:"mode,omitempty"`
	ModeAt string      `json:"mode_at,omitempty"`
	Counts map[int]int `json:"counts,omitempty"` // dataset position -> samples so far (problems with any)
}

// State returns the Matcher's MatchState.
func (m *Matcher) State() MatchState {
	s := MatchState{Mode: m.mode, ModeAt: m.modeAt, Counts: map[int]int{}}
	for p, st := range m.state {
		if st.n > 0 {
			s.Counts[p] = st.n
		}
	}
	return s
}

// Resume makes m go on from s, for a part of a file read from the checkpoint where s was taken. The
// checks that need the whole file, or every earlier sample (completions that are not model output,
// a duplicate index, a problem on two per-problem records), are off: the read that made s did them.
func (m *Matcher) Resume(s MatchState) {
	m.mode, m.modeAt, m.noGuard = s.Mode, s.ModeAt, true
	for p, n := range s.Counts {
		if p >= 0 && p < len(m.state) {
			m.state[p].n = n
		}
	}
}

package math

import (
	"sort"
	"strings"
)

// Extraction rules, recorded in verify.Verdict.Rule.
const (
	RuleAnswer      = "answer"          // the input was already a final answer
	RuleAnswerTag   = "answer-tag"      // <answer>...</answer>
	RuleBoxed       = "boxed"           // last \boxed{} / \fbox{}
	RuleBoxedJoined = "boxed-joined"    // several boxes on the last line, joined as a list
	RuleFinalAnswer = "final-answer-is" // "final answer is ...", "Answer: ..."
	RuleHashes      = "gsm8k-hashes"    // "#### 42"
	RuleAnswerLine  = "answer-line"     // a last line "A: 42"
	RuleLastMath    = "last-math"       // last $...$ / \[...\] / \(...\) span
	RuleLastNumber  = "last-number"     // last number (or short formula) in the text
	RuleChoice      = "choice-letter"   // multiple-choice letter
)

// extraction is the final answer found in a completion.
type extraction struct {
	answer string
	rule   string
	// fallback answers tried when answer is prose (the snippet after
	// "final answer is" may be a sentence): in order of preference.
	fallbacks []string
	// start is the offset where the answer (or its marker) begins.
	start int
	// limit is set when the answer may be cut by the search window: it
	// is then not graded.
	limit *limitError
	// fallbackStarts are the fallbacks with the offsets they come from.
	fallbackStarts []fallback
}

type fallback struct {
	answer string
	start  int
}

// stopMarkers end a completion: what follows is a hallucinated next turn.
var stopMarkers = []string{
	"<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|user|>", "</s>",
	"\n\nProblem:", "\nProblem:", "\n\nQuestion:", "\nHuman:", "\nUser:", "\n\nQ:",
}

// prepareCompletion normalises a completion and keeps the part where the
// final answer is: before any hallucinated next turn, and at most the last
// maxCompletionTail bytes. When it had to cut, guard is the offset in the
// result before which an answer may have started outside the kept part (the
// cut point itself, or the end of a group the cut opened in the middle of,
// such as a \boxed{...} whose opening brace was cut off); otherwise guard
// is 0.
func prepareCompletion(s string) (string, int) {
	return prepareWindow(cutAtStop(s), maxCompletionTail)
}

// cutAtStop cuts a completion at a hallucinated next turn.
func cutAtStop(s string) string {
	// One scan per lead byte ('<' for special tokens, '\n' for a new
	// turn) instead of one per marker.
	end := len(s)
	for _, lead := range [...]byte{'<', '\n'} {
		for i := 1; i < end; {
			k := strings.IndexByte(s[i:end], lead)
			if k < 0 {
				break
			}
			i += k
			for _, m := range stopMarkers {
				if m[0] == lead && strings.HasPrefix(s[i:], m) {
					end = i
					break
				}
			}
			i++
		}
	}
	return s[:end]
}

// prepareWindow keeps the last window bytes of s, normalised, with the
// guard described at prepareCompletion.
func prepareWindow(s string, window int) (string, int) {
	if len(s) <= window {
		return normalizeText(s), 0
	}
	c := len(s) - window
	for c < len(s) && s[c]&0xC0 == 0x80 { // rune boundary
		c++
	}
	w := s[c:]
	g := max(cutGuard(w), spanGuard(s, c))
	if g >= len(w) {
		return normalizeText(w), len(normalizeText(w)) + 1
	}
	for g < len(w) && w[g]&0xC0 == 0x80 {
		g++
	}
	// Normalise the two parts apart so the guard keeps its meaning.
	head, tail := normalizeText(w[:g]), normalizeText(w[g:])
	return head + tail, len(head)
}

// cutGuard returns the end of the prefix of s that may belong to a group
// opened before s begins: past the last point where more braces (or
// display-math delimiters) have closed than opened; at least 1.
func cutGuard(s string) int {
	guard, depth, low := 1, 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				switch s[i+1] {
				case ']', ')':
					depth--
				case '[', '(':
					depth++
				}
			}
			i++
		case '{':
			depth++
		case '}':
			depth--
		}
		if depth < low {
			low = depth
			guard = i + 1
		}
	}
	return guard
}

// spanGuard looks before the cut at c for a structure that the cut splits:
// a \boxed{ or \fbox{ still open at the cut, a $ math span still open, or
// a final-answer phrase whose sentence runs past the cut. It returns the
// offset in s[c:] where that structure ends (0 if there is none). The scans
// are linear in len(s).
func spanGuard(s string, c int) int {
	w := s[c:]
	guard := 0
	// An open box.
	j := max(lastIndex(s[:c], `\boxed`), lastIndex(s[:c], `\fbox`))
	if j >= 0 {
		k := strings.IndexByte(s[j:], '{')
		if k >= 0 && k < 8 {
			if e := matchBrace(s, j+k); e >= c {
				guard = max(guard, e-c+1)
			}
		}
	}
	// An open $...$ span: an odd number of unescaped $ before the cut.
	n := 0
	for i := 0; i < c; {
		k := strings.IndexByte(s[i:c], '$')
		if k < 0 {
			break
		}
		i += k
		if i == 0 || s[i-1] != '\\' {
			n++
		}
		i++
	}
	if n%2 == 1 {
		if k := strings.IndexByte(w, '$'); k >= 0 {
			guard = max(guard, k+1)
		} else {
			guard = len(w)
		}
	}
	// A marked answer whose sentence is not over at the cut.
	tailStart := max(0, c-maxAnswerLen)
	for tailStart < c && s[tailStart]&0xC0 == 0x80 {
		tailStart++
	}
	if snip, pos := phraseAnswer(s[tailStart:c]); pos >= 0 && strings.HasSuffix(s[tailStart:c], snip) && strings.TrimSpace(snip) != "" {
		end := len(sentence(w))
		guard = max(guard, end)
	}
	return guard
}

type span struct{ start, end, cstart, cend int } // whole [start,end), content [cstart,cend)

// findBoxes returns the top-level \boxed{...} and \fbox{...} spans of s, in
// order. A box without braces (\boxed 5) extends to the next space or $.
func findBoxes(s string) []span {
	var out []span
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '\\')
		if j < 0 {
			break
		}
		i += j
		var name string
		switch {
		case strings.HasPrefix(s[i:], `\boxed`):
			name = `\boxed`
		case strings.HasPrefix(s[i:], `\fbox`):
			name = `\fbox`
		default:
			i++
			continue
		}
		k := i + len(name)
		if k < len(s) && isLetter(s[k]) {
			i = k
			continue
		}
		for k < len(s) && s[k] == ' ' {
			k++
		}
		if k < len(s) && s[k] == '{' {
			e := matchBrace(s, k)
			if e >= len(s) {
				// Unbalanced (truncated): take the rest.
				out = append(out, span{i, len(s), k + 1, len(s)})
				break
			}
			out = append(out, span{i, e + 1, k + 1, e})
			i = e + 1
			continue
		}
		e := k
		for e < len(s) && s[e] != ' ' && s[e] != '$' && s[e] != '\n' {
			e++
		}
		if e > k {
			out = append(out, span{i, e, k, e})
		}
		i = e
		if len(out) > 4096 {
			break
		}
	}
	return out
}

// joinableGap reports whether the text between two boxes says they are
// parts of one answer: nothing but punctuation, spacing, math delimiters,
// and a connector ("and", "or"), optionally followed by a label ("y_2 =").
func joinableGap(gap string) bool {
	if len(gap) > 80 || strings.Contains(gap, "\n\n") {
		return false
	}
	var b strings.Builder
	for i := 0; i < len(gap); i++ {
		c := gap[i]
		switch c {
		case '$', '{', '}', ',', ';', '.', ' ', '\n', '~', '(', ')', '[', ']':
			if (c == '(' || c == ')') && (i == 0 || gap[i-1] != '\\') {
				b.WriteByte(c) // a literal parenthesis is content ("part (a)")
			} else {
				b.WriteByte(' ')
			}
			continue
		case '\\':
			j := i + 1
			for j < len(gap) && isLetter(gap[j]) {
				j++
			}
			name := gap[i+1 : j]
			switch name {
			case "quad", "qquad", "text", "textbf", "mbox", "mathrm", "":
				if name == "" && j < len(gap) {
					j++ // \( \) \[ \] \, \;
				}
				i = j - 1
				b.WriteByte(' ')
				continue
			}
			b.WriteString(gap[i:j])
			i = j - 1
			continue
		}
		b.WriteByte(c | 0x20*boolByte(c >= 'A' && c <= 'Z'))
	}
	fields := strings.Fields(b.String())
	if len(fields) == 0 {
		return true
	}
	last := fields[len(fields)-1]
	if last == "and" || last == "or" || last == "&" {
		return true
	}
	if strings.HasSuffix(last, "=") || last == "=" {
		for _, f := range fields {
			if f == "and" || f == "or" {
				return true
			}
		}
	}
	return false
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// boxedAnswer returns the content of the last box, or of the last boxes on
// the last line joined as a list ("\boxed{2} and \boxed{3}" -> "2, 3").
func boxedAnswer(s string, boxes []span) (string, string, *limitError) {
	// An exact answer boxed and then its decimal approximation boxed
	// ("\boxed{\sqrt 3} ≈ \boxed{1.732}", "\boxed{\approx 1.732}"): the
	// answer is the exact one.
	for len(boxes) > 1 && approxBox(s, boxes[len(boxes)-2], boxes[len(boxes)-1]) {
		boxes = boxes[:len(boxes)-1]
	}
	last := boxes[len(boxes)-1]
	parts := []string{s[last.cstart:last.cend]}
	for k := len(boxes) - 2; k >= 0; k-- {
		if !joinableGap(s[boxes[k].end:boxes[k+1].start]) {
			break
		}
		if len(parts) == maxBoxes {
			return "", RuleBoxedJoined, errBoxes
		}
		parts = append(parts, s[boxes[k].cstart:boxes[k].cend])
	}
	if len(parts) == 1 {
		return parts[0], RuleBoxed, nil
	}
	// Reverse into reading order, dropping repeats of the same content.
	seen := map[string]bool{}
	var out []string
	for k := len(parts) - 1; k >= 0; k-- {
		key := compactKey(parts[k])
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, parts[k])
	}
	if len(out) == 1 {
		return out[0], RuleBoxed, nil
	}
	return strings.Join(out, ", "), RuleBoxedJoined, nil
}

// approxBox reports whether box b only approximates the box a before it:
// its content starts with ≈, or it is a decimal and the text between the
// two boxes says ≈.
func approxBox(s string, a, b span) bool {
	c := strings.TrimSpace(s[b.cstart:b.cend])
	if strings.HasPrefix(c, `\approx`) || strings.HasPrefix(c, "≈") || strings.HasPrefix(c, `\sim`) {
		return true
	}
	gap := s[a.end:b.start]
	if len(gap) > 80 || !(strings.Contains(gap, `\approx`) || strings.Contains(gap, "≈") || strings.Contains(gap, "approximately")) {
		return false
	}
	dot := false
	for i := 0; i < len(c); i++ {
		switch {
		case isDigit(c[i]):
		case c[i] == '.' && !dot:
			dot = true
		case c[i] == '-' && i == 0:
		default:
			return false
		}
	}
	return dot
}

// answerMarkers are final-answer phrases in other languages (the English
// ones are matched case-insensitively by phraseAnswer). They mark an answer
// as final just as "Answer:" does. Each group is looked for only when its
// stem occurs in the text, so the common case costs one scan per group.
var answerMarkers = []struct {
	stem    string
	markers []string
}{
	{"答", []string{"答案是", "答案:", "答案为", "答案為", "答:", "最终答案", "最終答案", "答えは", "答え:", "解答:"}},
	{"답", []string{"정답은", "정답:", "답은", "답:"}},
	{"ponse", []string{"réponse est", "Réponse est", "Réponse :", "Réponse:", "réponse :", "réponse:", "RÉPONSE:"}},
	{"spuesta", []string{"respuesta es", "Respuesta es", "Respuesta:", "respuesta:", "RESPUESTA:"}},
	{"sposta", []string{"resposta é", "Resposta é", "Resposta:", "resposta:", "risposta è", "Risposta è", "Risposta:", "risposta:"}},
	{"ntwo", []string{"Antwort ist", "Antwort lautet", "Antwort:", "antwort:", "ANTWORT:", "antwoord is", "Antwoord:"}},
	{"твет", []string{"Ответ:", "ответ:", "Ответ —"}},
	{"ТВЕТ", []string{"ОТВЕТ:"}},
	{"дповід", []string{"Відповідь:"}},
	{"dpowied", []string{"Odpowiedź:", "odpowiedź:"}},
	{"dpově", []string{"Odpověď:"}},
	{"evap", []string{"Cevap:", "cevap:"}},
	{"الإجابة", []string{"الإجابة:", "الإجابة هي"}},
	{"الجواب", []string{"الجواب:"}},
	{"उत्तर", []string{"उत्तर:", "उत्तर है"}},
	{"উত্তর", []string{"উত্তর:"}},
	{"คำตอบ", []string{"คำตอบคือ", "คำตอบ:"}},
	{"áp án", []string{"Đáp án:", "đáp án là"}},
	{"awaban", []string{"Jawaban:", "jawabannya adalah"}},
}

// phraseAnswer finds the last phrase introducing a final answer ("the
// final answer is", "Answer:", "the answer is", "答案是", "Réponse :") and
// returns the text after it up to the end of the sentence, and the phrase
// position (-1 if none). It scans forward with strings.Index (fast) and
// matches case-insensitively without copying s.
//
// The English marker is matched in every case and with the markdown the
// harnesses' prompts lead models to write: lighteval's and Inspect's math
// prompts ask for "ANSWER: $ANSWER" in capitals, simple-evals reads
// (?i)Answer\s*:, and chat models bold the label ("**Answer:** 5",
// "**Final Answer**: 5"). A marker the verifier misses leaves the sample to
// the last-number fallback, which the strict policy never counts.
func phraseAnswer(s string) (string, int) {
	best, bestEnd := -1, -1
	for i := 0; ; {
		k := indexNswer(s[i:])
		if k < 0 {
			break
		}
		k += i
		i = k + 5
		if k == 0 || s[k-1]|0x20 != 'a' {
			continue
		}
		start, end := k-1, k+5
		end += markupLen(s[end:])
		rest := s[end:]
		if n := len(rest) - len(strings.TrimLeft(rest, " ")); n <= 2 && n < len(rest) && rest[n] == ':' {
			end += n + 1 // "Answer:", "answer :", simple-evals' Answer\s*:
		} else if len(rest) >= 3 && rest[0] == ' ' && rest[1]|0x20 == 'i' && rest[2]|0x20 == 's' && (len(rest) == 3 || !isLetter(rest[3])) {
			end += 3 // "the answer is", "THE ANSWER IS"
		} else {
			continue
		}
		end += markupLen(s[end:]) // "**Answer:** 5"
		if end > bestEnd {
			best, bestEnd = start, end
		}
	}
	// Markers in other languages: only after the last English one (the
	// last marker wins), and non-Latin ones only in text that has them.
	from := max(bestEnd, 0)
	if i := lastIndex(s, `\boxed`); i > from {
		from = i // a phrase before the last box loses to it anyway
	}
	tail := s[from:]
	nonASCII := false
	for i := 0; i < len(tail); i++ {
		if tail[i] >= 0x80 {
			nonASCII = true
			break
		}
	}
	for _, g := range answerMarkers {
		if g.stem[0] >= 0x80 && !nonASCII || !strings.Contains(tail, g.stem) {
			continue
		}
		for _, p := range g.markers {
			if i := lastIndex(tail, p); i >= 0 && from+i+len(p) > bestEnd {
				best, bestEnd = from+i, from+i+len(p)
			}
		}
	}
	if best < 0 {
		return "", -1
	}
	rest := strings.TrimLeft(s[bestEnd:], " :*_\n")
	return trimMarkup(sentence(rest)), best
}

// indexNswer is the first "nswer" or "NSWER" in s (the rest of "answer" in
// lower case, title case or capitals), or -1.
func indexNswer(s string) int {
	k := strings.Index(s, "nswer")
	if u := strings.Index(s, "NSWER"); u >= 0 && (k < 0 || u < k) {
		k = u
	}
	return k
}

// markupLen is the length of the markdown emphasis (*, _) that opens s.
func markupLen(s string) int {
	n := 0
	for n < len(s) && (s[n] == '*' || s[n] == '_') && n < 4 {
		n++
	}
	return n
}

// trimMarkup drops the bold that closes a bolded answer ("**5**"; a
// single * may be math, as in a^*).
func trimMarkup(s string) string {
	t := strings.TrimRight(s, " ")
	if strings.HasSuffix(t, "**") {
		t = strings.TrimRight(t[:len(t)-2], " ")
	}
	return t
}

// sentence cuts s at the end of its first sentence: "I hope it is
// correct", a blank line, a newline outside display math, or ". ".
func sentence(s string) string {
	if i := strings.Index(s, "I hope it is correct"); i >= 0 {
		s = s[:i]
	}
	inMath := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '$':
			if i+1 < len(s) && s[i+1] == '$' {
				i++
			}
			inMath = !inMath
		case c == '\\' && i+1 < len(s) && (s[i+1] == '[' || s[i+1] == '('):
			inMath = true
			i++
		case c == '\\' && i+1 < len(s) && (s[i+1] == ']' || s[i+1] == ')'):
			inMath = false
			i++
		case c == '\n' && !inMath:
			return s[:i]
		case c == '.' && !inMath && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n'):
			return s[:i]
		}
	}
	return s
}

// lastMathSpan returns the content and end offset of the last $...$,
// $$...$$, \(...\) or \[...\] span ($...$ may not cross a newline).
func lastMathSpan(s string) (string, int) {
	content, end := "", -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		var closer string
		open := 0
		switch {
		case c == '$' && i+1 < len(s) && s[i+1] == '$':
			closer, open = "$$", 2
		case c == '$' && (i == 0 || s[i-1] != '\\'):
			closer, open = "$", 1
		case c == '\\' && i+1 < len(s) && s[i+1] == '(':
			closer, open = `\)`, 2
		case c == '\\' && i+1 < len(s) && s[i+1] == '[':
			closer, open = `\]`, 2
		default:
			continue
		}
		j := strings.Index(s[i+open:], closer)
		if j < 0 {
			continue
		}
		body := s[i+open : i+open+j]
		if closer == "$" && strings.IndexByte(body, '\n') >= 0 {
			continue
		}
		if strings.TrimSpace(body) != "" {
			content, end = body, i+open+j+len(closer)
		}
		i += open + j + len(closer) - 1
	}
	return content, end
}

func isRunChar(c byte) bool {
	return isDigit(c) || c == '.' || c == ',' || c == '/' || c == '^' || c == '{' || c == '}' ||
		c == '(' || c == ')' || c == '%' || c == '\\'
}

// lastNumber returns the last number in s with the short formula around it
// ("2/3", "\frac{2}{5}", "1,000.99", "-5", "25%"), and its end offset.
func lastNumber(s string) (string, int) {
	i := len(s) - 1
	for {
		for i >= 0 && !isDigit(s[i]) {
			i--
		}
		if i < 0 {
			return "", -1
		}
		j := i
		for j > 0 && isDigit(s[j-1]) {
			j--
		}
		// Skip exponents (m^2) and digits glued to a word (AZYUK2A, x2).
		if j > 0 && (s[j-1] == '^' || s[j-1] == '_' || isLetter(s[j-1]) && !isCommandEnd(s, j-1)) || inScript(s, j) {
			i = j - 1
			continue
		}
		break
	}
	end := i + 1
	for end < len(s) && isRunChar(s[end]) {
		end++
	}
	start := i
	for start > 0 {
		c := s[start-1]
		if isRunChar(c) {
			start--
			continue
		}
		if isThousandsBang(s, start-1) { // 8,\!096: a LaTeX thousands separator
			start -= 2
			continue
		}
		if isLetter(c) {
			// Letters belong to the run only as a command name (\frac).
			j := start - 1
			for j > 0 && isLetter(s[j-1]) {
				j--
			}
			if j > 0 && s[j-1] == '\\' {
				start = j - 1
				continue
			}
		}
		break
	}
	// A plain-text mixed number "3 1/4": take the whole part too.
	if isSimpleFraction(s[start:end]) && start >= 2 && s[start-1] == ' ' && isDigit(s[start-2]) {
		k := start - 1
		for k > 0 && isDigit(s[k-1]) {
			k--
		}
		if k == 0 || !isLetter(s[k-1]) && s[k-1] != '.' && s[k-1] != '/' && s[k-1] != '^' && s[k-1] != '_' {
			start = k
		}
	}
	if start > 0 && s[start-1] == '-' && (start == 1 || !isDigit(s[start-2]) && !isLetter(s[start-2])) {
		start--
	}
	run := balanceRun(s[start:end])
	if run == "" {
		// Fall back to the bare digits.
		j := i
		for j > 0 && (isDigit(s[j-1]) || s[j-1] == '.') {
			j--
		}
		return s[j : i+1], i + 1
	}
	return run, end
}

// isThousandsBang reports whether s[i] is the "!" of a LaTeX thousands
// separator ",\!" between digits (8,\!096: KaTeX and models write it so).
func isThousandsBang(s string, i int) bool {
	return i >= 2 && i+1 < len(s) && s[i] == '!' && s[i-1] == '\\' && s[i-2] == ',' && isDigit(s[i+1]) && i >= 3 && isDigit(s[i-3])
}

// isSimpleFraction reports whether r is "a/b" with a and b digit strings.
func isSimpleFraction(r string) bool {
	i := strings.IndexByte(r, '/')
	if i <= 0 || i == len(r)-1 {
		return false
	}
	for k := 0; k < len(r); k++ {
		if k != i && !isDigit(r[k]) {
			return false
		}
	}
	return true
}

// balanceRun trims unmatched brackets and punctuation from the ends of a
// run; it returns "" if the braces cannot be balanced.
func balanceRun(r string) string {
	for changed := true; changed && r != ""; {
		changed = false
		r = strings.Trim(r, ",.")
		open := strings.Count(r, "(") - strings.Count(r, ")")
		if open > 0 && strings.HasPrefix(r, "(") {
			r, changed = r[1:], true
		} else if open < 0 && strings.HasSuffix(r, ")") {
			r, changed = r[:len(r)-1], true
		}
	}
	if strings.Count(r, "{") != strings.Count(r, "}") || strings.Count(r, "(") != strings.Count(r, ")") {
		return ""
	}
	for strings.HasSuffix(r, `\`) {
		r = r[:len(r)-1]
	}
	return r
}

// lastAnswerLine finds a final line "A: 42" (GSM8K few-shot format).
func lastAnswerLine(s string) (string, int) {
	t := strings.TrimRight(s, " \n")
	i := strings.LastIndexByte(t, '\n')
	line := t[i+1:]
	if strings.HasPrefix(line, "A:") {
		return strings.TrimSpace(line[2:]), i + 1
	}
	return "", -1
}

// extractFromCompletion finds the final answer in a model completion (or a
// reference solution). Explicit markers win over heuristics; among explicit
// markers the last one in the text wins, so "Final Answer: 12" after an
// earlier \boxed{11} is 12.
func extractFromCompletion(text string) (extraction, bool) {
	text = cutAtStop(text)
	if len(text) <= quickWindow {
		return extractWindow(normalizeText(text), false)
	}
	// Long completions: an explicit answer wholly inside the last
	// quickWindow bytes is the one a search of the full window would find
	// (the last marker wins). Otherwise the full window is searched for an
	// explicit answer; the fallback readings (last math span, last number)
	// come from the quick window, as they only look at the end.
	sQ, gQ := prepareWindow(text, quickWindow)
	exQ, okQ := extractWindow(sQ, false)
	if okQ && exQ.explicit() && exQ.limit == nil && exQ.start >= gQ {
		return dropCutFallbacks(exQ, gQ), true
	}
	sF, gF := prepareWindow(text, maxCompletionTail)
	if ex, ok := extractWindow(sF, true); ok {
		if gF > 0 && ex.start < gF {
			ex.limit = errWindow
		}
		return dropCutFallbacks(ex, gF), true
	}
	if okQ && !exQ.explicit() && exQ.start >= gQ {
		return dropCutFallbacks(exQ, gQ), true
	}
	ex, ok := extractWindow(sF, false)
	if ok && gF > 0 && ex.start < gF {
		ex.limit = errWindow
	}
	return dropCutFallbacks(ex, gF), ok
}

// dropCutFallbacks keeps the fallbacks that cannot reach back past the cut
// of a window (guard > 0).
func dropCutFallbacks(ex extraction, guard int) extraction {
	if guard <= 0 {
		return ex
	}
	ex.fallbacks = ex.fallbacks[:0:0]
	for _, f := range ex.fallbackStarts {
		if f.start >= guard {
			ex.fallbacks = append(ex.fallbacks, f.answer)
		}
	}
	return ex
}

// extractWindow finds the answer in the searched part of a completion.
// After </think> is the answer proper; if it has no explicit answer (a
// truncated summary), the reasoning may still state one.
func extractWindow(s string, explicitOnly bool) (extraction, bool) {
	if i := lastIndex(s, "</think>"); i >= 0 {
		base := i + len("</think>")
		if rest := s[base:]; strings.TrimSpace(rest) != "" {
			exR, okR := extractFrom(rest, explicitOnly)
			if okR && exR.explicit() {
				return exR.shift(base), true
			}
			if ex, ok := extractFrom(s[:i], true); ok {
				return ex, true
			}
			return exR.shift(base), okR
		}
		s = s[:i]
	}
	return extractFrom(s, explicitOnly)
}

// shift moves the offsets of an extraction from a slice starting at base.
func (e extraction) shift(base int) extraction {
	e.start += base
	fs := make([]fallback, len(e.fallbackStarts))
	for i, f := range e.fallbackStarts {
		fs[i] = fallback{f.answer, f.start + base}
	}
	e.fallbackStarts = fs
	return e
}

func (e extraction) explicit() bool { return e.rule != RuleLastMath && e.rule != RuleLastNumber }

// extractFrom finds the answer in s: the last explicit marker, else (unless
// explicitOnly) the last math span or number.
func extractFrom(s string, explicitOnly bool) (extraction, bool) {
	if strings.TrimSpace(s) == "" {
		return extraction{}, false
	}
	// <answer>...</answer>
	if i := lastIndex(s, "<answer>"); i >= 0 {
		body := s[i+len("<answer>"):]
		if j := strings.Index(body, "</answer>"); j >= 0 {
			body = body[:j]
		}
		if boxes := findBoxes(body); len(boxes) > 0 {
			a, _, lim := boxedAnswer(body, boxes)
			return extraction{answer: a, rule: RuleAnswerTag, start: i, limit: lim}, true
		}
		if strings.TrimSpace(body) != "" {
			return extraction{answer: body, rule: RuleAnswerTag, start: i}, true
		}
	}
	var found []extraction
	if boxes := findBoxes(s); len(boxes) > 0 {
		a, rule, lim := boxedAnswer(s, boxes)
		found = append(found, extraction{answer: a, rule: rule, start: boxes[len(boxes)-1].start, limit: lim})
	}
	if snip, pos := phraseAnswer(s); pos >= 0 && strings.TrimSpace(snip) != "" {
		found = append(found, extraction{answer: snip, rule: RuleFinalAnswer, fallbacks: snippetFallbacks(snip), start: pos})
	}
	if i, rest := gsm8kHashes(s); i >= 0 {
		found = append(found, extraction{answer: rest, rule: RuleHashes, fallbacks: snippetFallbacks(rest), start: i})
	}
	if a, pos := lastAnswerLine(s); pos >= 0 && a != "" {
		found = append(found, extraction{answer: a, rule: RuleAnswerLine, fallbacks: snippetFallbacks(a), start: pos})
	}
	if len(found) > 0 {
		// The last marker wins; earlier ones are fallbacks for when its
		// answer cannot be read.
		sort.SliceStable(found, func(a, b int) bool { return found[a].start > found[b].start })
		best := found[0]
		for _, f := range best.fallbacks {
			best.fallbackStarts = append(best.fallbackStarts, fallback{f, best.start})
		}
		for _, c := range found[1:] {
			best.fallbacks = append(best.fallbacks, c.answer)
			best.fallbackStarts = append(best.fallbackStarts, fallback{c.answer, c.start})
			for _, f := range c.fallbacks {
				best.fallbacks = append(best.fallbacks, f)
				best.fallbackStarts = append(best.fallbackStarts, fallback{f, c.start})
			}
		}
		return best, true
	}
	if explicitOnly {
		return extraction{}, false
	}
	mathBody, mathEnd := lastMathSpan(s)
	num, numEnd := lastNumber(s)
	if mathEnd >= 0 && mathEnd >= numEnd {
		ex := extraction{answer: mathBody, rule: RuleLastMath, fallbacks: snippetFallbacks(mathBody), start: mathEnd - len(mathBody) - 2}
		for _, f := range ex.fallbacks {
			ex.fallbackStarts = append(ex.fallbackStarts, fallback{f, ex.start})
		}
		return ex, true
	}
	if numEnd >= 0 {
		return extraction{answer: num, rule: RuleLastNumber, start: numEnd - len(num)}, true
	}
	return extraction{}, false
}

// snippetFallbacks lists readings of a sentence-like answer: the part
// after its last " is ", its first math span, its first number (with its
// short formula). The sentence follows a final-answer marker, so what comes
// first in it is the answer: "Réponse : Janeth aura encore 220 $ à payer
// d'ici 12 mois" is 220.
func snippetFallbacks(s string) []string {
	var out []string
	if i := lastIndex(s, " is "); i >= 0 {
		out = append(out, s[i+4:])
	}
	if m, ok := firstMathSpan(s); ok {
		out = append(out, m)
	}
	if n, ok := firstNumber(s); ok {
		out = append(out, n)
	}
	return out
}

// firstMathSpan returns the content of the first $...$ (one line), $$...$$,
// \(...\) or \[...\] span of s.
func firstMathSpan(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		var closer string
		open := 0
		switch {
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '$':
			closer, open = "$$", 2
		case s[i] == '$' && (i == 0 || s[i-1] != '\\'):
			closer, open = "$", 1
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '(':
			closer, open = `\)`, 2
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '[':
			closer, open = `\]`, 2
		default:
			continue
		}
		j := strings.Index(s[i+open:], closer)
		if j < 0 {
			return "", false
		}
		body := s[i+open : i+open+j]
		if closer == "$" && strings.IndexByte(body, '\n') >= 0 || strings.TrimSpace(body) == "" {
			i += open + j + len(closer) - 1
			continue
		}
		return body, true
	}
	return "", false
}

// firstNumber returns the first number of s that is not part of a word,
// an exponent or an index, with its short formula (as lastNumber).
func firstNumber(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			continue
		}
		if i > 0 && (s[i-1] == '^' || s[i-1] == '_' || isLetter(s[i-1]) && !isCommandEnd(s, i-1)) || inScript(s, i) {
			for i < len(s) && isDigit(s[i]) {
				i++
			}
			continue
		}
		end := i
		for end < len(s) && (isRunChar(s[end]) || isThousandsBang(s, end)) {
			end++
		}
		// A mixed number "3 1/4" continues over one space.
		if end+1 < len(s) && s[end] == ' ' && isDigit(s[end+1]) && isDigitsOnly(s[i:end]) {
			k := end + 1
			for k < len(s) && isRunChar(s[k]) {
				k++
			}
			if isSimpleFraction(s[end+1 : k]) {
				end = k
			}
		}
		if n, e := lastNumber(s[:end]); e >= 0 {
			return n, true
		}
		return "", false
	}
	return "", false
}

func isDigitsOnly(r string) bool {
	for i := 0; i < len(r); i++ {
		if !isDigit(r[i]) {
			return false
		}
	}
	return r != ""
}

// allBoxes joins the distinct contents of all boxes of a reference that
// boxes several parts ("\boxed{2} and \boxed{5}", "\boxed{1}\boxed{2}",
// "\boxed{1}, thus \boxed{2}"): the reference's answer is everything it
// boxed, when nothing but punctuation and connectives stands between the
// boxes. A box that only approximates the one before it is left out. ok is
// false with fewer than two distinct boxes, more than maxBoxes, or other
// words between boxes (then the last box is the answer, as for completions).
func allBoxes(s string) (string, bool) {
	if !strings.Contains(s, `\boxed`) && !strings.Contains(s, `\fbox`) {
		return "", false
	}
	boxes := findBoxes(s)
	if len(boxes) < 2 || len(boxes) > maxBoxes {
		return "", false
	}
	seen := map[string]bool{}
	var out []string
	for i, b := range boxes {
		if i > 0 && approxBox(s, boxes[i-1], b) {
			continue
		}
		if i > 0 && !connectiveGap(s[boxes[i-1].end:b.start]) {
			return "", false
		}
		c := s[b.cstart:b.cend]
		key := compactKey(c)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, c)
	}
	if len(out) < 2 {
		return "", false
	}
	return strings.Join(out, ", "), true
}

// connectives may stand between the boxed parts of one reference answer.
var connectives = map[string]bool{"and": true, "or": true, "but": true, "thus": true, "so": true,
	"then": true, "also": true, "hence": true, "therefore": true, "et": true, "und": true, "y": true, "和": true, "或": true}

// connectiveGap reports whether the text between two boxes of a reference
// holds only punctuation, symbols, math delimiters and connectives.
func connectiveGap(gap string) bool {
	if len(gap) > 200 || strings.Contains(gap, "\n\n") {
		return false
	}
	for _, w := range strings.FieldsFunc(gap, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f)
	}) {
		if !connectives[strings.ToLower(w)] && !knownCommandExact(w) {
			return false
		}
	}
	return true
}

// unwrapBoxes returns the boxed content of an answer that still carries
// \boxed (inputs marked "answer" often do), or the answer itself.
func unwrapBoxes(s string) (string, bool) {
	if !strings.Contains(s, `\boxed`) && !strings.Contains(s, `\fbox`) {
		return s, false
	}
	boxes := findBoxes(s)
	if len(boxes) == 0 {
		return s, false
	}
	a, _, lim := boxedAnswer(s, boxes)
	if lim != nil {
		return s, false
	}
	return a, true
}

// isCommandEnd reports whether the letter at s[i] ends a LaTeX command
// name (\frac2 is not a glued word).
func isCommandEnd(s string, i int) bool {
	for i >= 0 && isLetter(s[i]) {
		i--
	}
	return i >= 0 && s[i] == '\\'
}

// gsm8kHashes finds the last GSM8K answer line "#### 42". A markdown
// heading ("#### Step 2") or a run of more than four '#' is not one.
func gsm8kHashes(s string) (int, string) {
	if !strings.Contains(s, "####") {
		return -1, ""
	}
	for end := len(s); end > 0; {
		i := lastIndex(s[:end], "####")
		if i < 0 {
			return -1, ""
		}
		end = i
		if i > 0 && s[i-1] == '#' || i+4 < len(s) && s[i+4] == '#' {
			continue
		}
		rest := strings.TrimLeft(s[i+4:], " ")
		if j := strings.IndexByte(rest, '\n'); j >= 0 {
			rest = rest[:j]
		}
		rest = strings.TrimSpace(rest)
		if rest == "" {
			continue
		}
		if c := rest[0]; isDigit(c) || c == '-' || c == '$' || c == '\\' || c == '.' || c == '(' {
			return i, rest
		}
	}
	return -1, ""
}

// inScript reports whether offset i lies inside a _{...} or ^{...} group
// (an index or exponent, not an answer), looking back at most 64 bytes.
func inScript(s string, i int) bool {
	depth := 0
	for k := i - 1; k >= 0 && k >= i-64; k-- {
		switch s[k] {
		case '}':
			depth++
		case '{':
			if depth == 0 {
				return k > 0 && (s[k-1] == '_' || s[k-1] == '^')
			}
			depth--
		case '\n':
			return false
		}
	}
	return false
}

// lastIndex is strings.LastIndex, guarded by the much faster forward
// strings.Index (SIMD) for the common case where sub does not occur.
func lastIndex(s, sub string) int {
	i := strings.Index(s, sub)
	if i < 0 {
		return -1
	}
	if j := strings.LastIndex(s[i+1:], sub); j >= 0 {
		return i + 1 + j
	}
	return i
}

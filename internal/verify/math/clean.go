package math

import (
	"strings"
	"unicode/utf8"
)

// unicodeMap rewrites the Unicode math that models emit into the LaTeX the
// parser reads. Spaces of every width become one ASCII space.
var unicodeMap = map[rune]string{
	'π': `\pi `, '√': `\sqrt`, '∛': `\sqrt[3]`, '≤': `\le `, '≥': `\ge `, '≠': `\ne `,
	'±': `\pm `, '∓': `\mp `, '×': `\times `, '÷': `\div `, '·': `\cdot `, '⋅': `\cdot `,
	'−': "-", '–': "-", '∞': `\infty `, '°': `^\circ `, '∪': `\cup `, '∩': `\cap `,
	'∈': `\in `, '²': "^2", '³': "^3", '¹': "^1", '½': "(1/2)", '¼': "(1/4)", '¾': "(3/4)",
	'≈': `\approx `, '∅': `\emptyset `, 'θ': `\theta `, 'α': `\alpha `, 'β': `\beta `,
	'γ': `\gamma `, 'λ': `\lambda `, 'μ': `\mu `, 'σ': `\sigma `, 'φ': `\phi `, 'ω': `\omega `,
	'，': ",", '：': ":", '；': ";", '（': "(", '）': ")", '［': "[", '］': "]",
	'⁄': "/", '∕': "/", '′': "'", '…': `\ldots `, '∶': ":", '＝': "=", '＋': "+", '－': "-",
	'\u00a0': " ", '\u2002': " ", '\u2003': " ", '\u2009': " ", '\u200a': " ",
	'\u202f': " ", '\u3000': " ", '\u2005': " ", '\u2006': " ", '\u2007': " ", '\u2008': " ",
	'\u200b': "", '\u200c': "", '\u200d': "", '\ufeff': "",
	'\t': " ", '\r': " ",
	'。': ". ",
}

// normalizeText maps Unicode math to LaTeX, undoes doubled backslashes in
// front of known commands (`\\frac` as stored by some JSON producers), and
// turns a literal two-character `\n` that is not a command into a newline.
// It is linear in len(s) and allocates only when something changes.
func normalizeText(s string) string {
	if !needsNormalize(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\\' {
			// Doubled backslash before a known command name: `\\frac` -> `\frac`.
			if i+1 < len(s) && s[i+1] == '\\' {
				j := i + 2
				k := j
				for k < len(s) && isLetter(s[k]) {
					k++
				}
				if k > j && knownCommandPrefix(s[j:k]) {
					b.WriteByte('\\')
					i = j
					continue
				}
				b.WriteString(`\\`)
				i += 2
				continue
			}
			// Literal `\n`, `\t` (two characters) that is not a command.
			if i+1 < len(s) && (s[i+1] == 'n' || s[i+1] == 't') {
				j := i + 1
				k := j
				for k < len(s) && isLetter(s[k]) {
					k++
				}
				if !knownCommandPrefix(s[j:k]) {
					if s[i+1] == 'n' {
						b.WriteByte('\n')
					} else {
						b.WriteByte(' ')
					}
					i += 2
					continue
				}
			}
			b.WriteByte(c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			if c == '\t' || c == '\r' {
				b.WriteByte(' ')
				i++
				continue
			}
			// Copy the run of plain ASCII up to the next special byte.
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf && s[j] != '\\' && s[j] != '\t' && s[j] != '\r' {
				j++
			}
			b.WriteString(s[i:j])
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if rep, ok := unicodeMap[r]; ok {
			b.WriteString(rep)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsNormalize(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c == '\t' || c == '\r' {
			return true
		}
		if c == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == 'n' || s[i+1] == 't') {
			return true
		}
	}
	return false
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// approxWords introduce a value given approximately: read as ≈.
var approxWords = []string{"approximately", "approx.", "approx", "about", "roughly", "around"}

// answerPrefixes are lead-ins stripped from the front of an answer.
var answerPrefixes = []string{
	"the final answer is", "final answer:", "final answer", "the answer is", "answer:", "answer",
}

// cleanAnswer turns an extracted answer into the string the lexer reads: it
// removes math delimiters and dollar signs, thousands separators written as
// `{,}` or `,\!`, lead-ins like "Answer:", and trailing punctuation. It does
// not unwrap \boxed (see unwrapBoxes).
func cleanAnswer(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '$':
			b.WriteByte(' ')
		case c == '\\' && i+1 < len(s) && (s[i+1] == '$' || s[i+1] == '(' || s[i+1] == ')' || s[i+1] == '[' || s[i+1] == ']'):
			b.WriteByte(' ')
			i++
		case c == '{' && i > 0 && isDigit(lastNonSpace(s[:i])):
			// 14{,}916 (also "14 {, }916"): LaTeX thousands separator.
			if j, ok := bracedComma(s, i); ok {
				i = j
			} else {
				b.WriteByte(c)
			}
		case (c == ',' || c == '\\') && i > 0 && isDigit(s[i-1]) && thinSeparator(s, i) > 0:
			// 11,\!111, 15,\,400, 15\,400: thousands separators.
			i = thinSeparator(s, i) - 1
		default:
			b.WriteByte(c)
		}
	}
	out := strings.TrimSpace(b.String())
	// Lead-ins.
	for changed := true; changed; {
		changed = false
		low := strings.ToLower(out)
		for _, p := range answerPrefixes {
			if strings.HasPrefix(low, p) && (len(out) == len(p) || !isLetter(out[len(p)])) {
				out = strings.TrimLeft(out[len(p):], " :")
				changed = true
				break
			}
		}
	}
	// "approximately 2.23" is "≈ 2.23".
	low := strings.ToLower(out)
	for _, w := range approxWords {
		if strings.HasPrefix(low, w+" ") && len(out) > len(w)+1 && (isDigit(out[len(w)+1]) || out[len(w)+1] == '$' || out[len(w)+1] == '-') {
			out = `\approx ` + out[len(w)+1:]
			break
		}
	}
	// Trailing punctuation and stray backslashes.
	for len(out) > 0 {
		last := out[len(out)-1]
		if last == '.' && strings.HasSuffix(out, "...") {
			break // an ellipsis is part of the answer ("1, 2, 3, ...")
		}
		if last == '.' || last == ',' || last == ';' || last == ' ' || last == ':' || last == '\n' {
			out = out[:len(out)-1]
			continue
		}
		if last == '!' && !factorialBang(out) {
			out = out[:len(out)-1]
			continue
		}
		if last == '\\' && (len(out) < 2 || out[len(out)-2] != '\\') {
			out = out[:len(out)-1]
			continue
		}
		if strings.HasSuffix(out, `\text{.}`) {
			out = out[:len(out)-len(`\text{.}`)]
			continue
		}
		break
	}
	// Markdown bold around the whole answer.
	for strings.HasPrefix(out, "**") && strings.HasSuffix(out, "**") && len(out) > 4 {
		out = strings.TrimSpace(out[2 : len(out)-2])
	}
	return out
}

// stripLeadingProse returns the relation that follows a leading run of
// prose words in an answer ("Therefore y > -2" -> "y > -2", "so we
// conclude that x = 3" -> "x = 3"), or "" when the answer does not start
// with prose or no relation follows it. The run is the words and single letters before the first
// other token; it is cut after its last word of three or more letters that
// is not a function, constant or unit name.
func stripLeadingProse(a string) string {
	if a == "" || !isLetter(a[0]) && a[0] < 0x80 && a[0] != '\\' {
		return ""
	}
	toks, err := lex(a)
	if err != nil {
		return ""
	}
	last := -1
	for i, t := range toks {
		if t.kind != tWord && t.kind != tIdent {
			break
		}
		if t.kind == tWord && proseWord(t.text) {
			last = i
		}
	}
	if last < 0 || last+1 >= len(toks) || toks[last+1].kind == tEOF {
		return ""
	}
	// The rest must be a relation ("y > -2", "x = 3"; plain values after
	// prose are left to the extraction fallbacks) and mathematics: no
	// further words of prose.
	rel := false
	for _, t := range toks[last+1:] {
		switch {
		case t.kind == tOp && (t.text == "=" || t.text == "<" || t.text == ">" || t.text == "<=" || t.text == ">=" || t.text == "!="):
			rel = true
		case t.kind == tCmd && commands[t.text] == cRel:
			rel = true
		}
	}
	if !rel {
		return ""
	}
	for _, t := range toks[last+1:] {
		if t.kind == tWord && !t.inFont {
			low := strings.ToLower(t.text)
			if _, ok := funcWords[low]; !ok && !unitWords[low] && !isPercentWord(low) && !isDegreeWord(low) &&
				low != "pi" && low != "sqrt" && low != "infty" && low != "and" && low != "or" {
				return ""
			}
		}
	}
	return strings.TrimLeft(a[toks[last+1].pos:], " ,:")
}

// proseWord reports whether w (three or more letters) reads as a word of
// prose rather than mathematics.
func proseWord(w string) bool {
	if len(w) < 3 {
		return false
	}
	low := strings.ToLower(w)
	if _, ok := funcWords[low]; ok {
		return false
	}
	switch low {
	case "pi", "sqrt", "infty", "infinity", "inf", "and", "or":
		return false
	}
	return !unitWords[low] && !isPercentWord(low) && !isDegreeWord(low)
}

// factorialBang reports whether the '!' ending s is a factorial (5!, n!,
// (n+1)!) rather than an exclamation after a word ("correct!").
func factorialBang(s string) bool {
	i := len(s) - 2
	for i >= 0 && s[i] == '!' {
		i--
	}
	if i < 0 {
		return false
	}
	c := s[i]
	if isDigit(c) || c == ')' || c == '}' || c == ']' {
		return true
	}
	return isLetter(c) && (i == 0 || !isLetter(s[i-1]))
}

// compactKey is the string used for the "identical answers" shortcut: the
// cleaned answer without spaces, spacing commands and sizing commands.
func compactKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '~' || c == '\n' {
			continue
		}
		if c == '\\' && i+1 < len(s) {
			n := s[i+1]
			if n == ',' || n == '!' || n == ';' || n == ':' || n == ' ' {
				i++
				continue
			}
			if strings.HasPrefix(s[i+1:], "left") && !(i+5 < len(s) && isLetter(s[i+5])) {
				i += 4
				continue
			}
			if strings.HasPrefix(s[i+1:], "right") && !(i+6 < len(s) && isLetter(s[i+6])) {
				i += 5
				continue
			}
			for _, w := range [...]string{"dfrac", "tfrac", "cfrac"} {
				if strings.HasPrefix(s[i+1:], w) {
					b.WriteString(`\frac`)
					i += len(w)
					goto next
				}
			}
		}
		b.WriteByte(c)
	next:
	}
	return b.String()
}

func lastNonSpace(s string) byte {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != ' ' {
			return s[i]
		}
	}
	return 0
}

// bracedComma matches "{,}" with optional spaces at s[i] followed by a
// digit; it returns the index of the closing brace.
func bracedComma(s string, i int) (int, bool) {
	j := skipBlank(s, i+1)
	if j >= len(s) || s[j] != ',' {
		return 0, false
	}
	j = skipBlank(s, j+1)
	if j >= len(s) || s[j] != '}' {
		return 0, false
	}
	k := skipBlank(s, j+1)
	if k >= len(s) || !isDigit(s[k]) {
		return 0, false
	}
	return k - 1, true
}

func skipBlank(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// thinSeparator matches a thousands separator made of a comma and/or a
// LaTeX thin space (",\!", ",\,", "\,", ",\ ") at s[i], followed by
// exactly three digits; it returns the offset of those digits, or 0.
func thinSeparator(s string, i int) int {
	j := i
	comma := false
	if s[j] == ',' {
		comma = true
		j++
	}
	thin := false
	if j+1 < len(s) && s[j] == '\\' && (s[j+1] == '!' || s[j+1] == ',' || s[j+1] == ' ') {
		thin = true
		j += 2
	}
	if !thin || !comma && s[i+1] == '!' {
		return 0
	}
	j = skipBlank(s, j)
	if j+2 < len(s) && isDigit(s[j]) && isDigit(s[j+1]) && isDigit(s[j+2]) && (j+3 == len(s) || !isDigit(s[j+3])) {
		return j
	}
	return 0
}

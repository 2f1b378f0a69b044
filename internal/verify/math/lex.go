package math

import (
	"strings"
)

type tokKind uint8

const (
	tEOF    tokKind = iota
	tNum            // number literal; text holds digits with '.', separators removed
	tIdent          // one ASCII letter, or a Greek letter name
	tWord           // run of two or more letters (or non-ASCII letters)
	tCmd            // LaTeX command; text is its name without the backslash
	tOp             // punctuation; text is the operator
	tRowSep         // `\\` (matrix row separator)
)

type token struct {
	kind  tokKind
	text  string
	space bool // whitespace precedes the token
	nl    bool // a line break precedes the token
	// inText: the token came from \text{...} or similar (prose, units).
	inText bool
	// inFont: the token came from \mathrm{...} and friends (a name).
	inFont bool
	// commaAlt: for a number followed directly by ',' and digits: see parser.
	pos int
}

type cmdClass uint8

const (
	cSkip    cmdClass = iota + 1 // sizing, spacing: ignore
	cSkipArg                     // ignore together with one braced argument
	cText                        // \text{...}: prose or units inside
	cFont                        // \mathrm{...}: a name inside
	cRel                         // relation
	cOp                          // binary operator / marker
	cFunc                        // named function
	cConst                       // constant
	cGreek                       // Greek letter used as a variable
	cStruct                      // handled by the parser
)

var commands = map[string]cmdClass{
	"left": cSkip, "right": cSkip, "displaystyle": cSkip, "textstyle": cSkip, "scriptstyle": cSkip,
	"big": cSkip, "Big": cSkip, "bigg": cSkip, "Bigg": cSkip, "bigl": cSkip, "bigr": cSkip,
	"Bigl": cSkip, "Bigr": cSkip, "biggl": cSkip, "biggr": cSkip, "Biggl": cSkip, "Biggr": cSkip,
	"limits": cSkip, "nolimits": cSkip, "quad": cSkip, "qquad": cSkip, "mathstrut": cSkip,
	"middle": cSkip, "enspace": cSkip, "thinspace": cSkip, "negthinspace": cSkip, "nonumber": cSkip,
	"notag": cSkip, "hfill": cSkip, "noindent": cSkip, "newline": cSkip, "mathord": cSkip, "dfrac_": cSkip,
	"medspace": cSkip, "negmedspace": cSkip, "thickspace": cSkip, "negthickspace": cSkip, "mathop": cSkip,
	"hspace": cSkipArg, "vspace": cSkipArg, "phantom": cSkipArg, "hphantom": cSkipArg,
	"vphantom": cSkipArg, "label": cSkipArg, "tag": cSkipArg, "color": cSkipArg,
	"text": cText, "textbf": cText, "textit": cText, "textrm": cText, "mbox": cText, "hbox": cText,
	"textsf": cText, "texttt": cText, "textnormal": cText, "emph": cText, "textup": cText,
	"mathrm": cFont, "mathbf": cFont, "mathit": cFont, "mathsf": cFont, "mathcal": cFont,
	"mathbb": cFont, "boldsymbol": cFont, "bm": cFont, "operatorname": cFont, "mathtt": cFont,
	"vec": cFont, "bar": cFont, "hat": cFont, "tilde": cFont, "overrightarrow": cFont,
	"widehat": cFont, "underline": cFont, "mathfrak": cFont, "mathscr": cFont, "pmb": cFont,
	"le": cRel, "leq": cRel, "leqslant": cRel, "ge": cRel, "geq": cRel, "geqslant": cRel,
	"ne": cRel, "neq": cRel, "approx": cRel, "in": cRel, "lt": cRel, "gt": cRel, "equiv": cRel,
	"sim": cRel, "simeq": cRel, "to": cRel, "rightarrow": cRel, "Rightarrow": cRel, "implies": cRel,
	"Longrightarrow": cRel, "longrightarrow": cRel, "iff": cRel, "notin": cRel, "cong": cRel,
	"subset": cRel, "subseteq": cRel, "doteq": cRel, "propto": cRel, "mapsto": cRel,
	"cdot": cOp, "times": cOp, "div": cOp, "ast": cOp, "pm": cOp, "mp": cOp, "cup": cOp,
	"cap": cOp, "setminus": cOp, "circ": cOp, "degree": cOp, "prime": cOp, "over": cOp,
	"colon": cOp, "mid": cOp, "vee": cOp, "wedge": cOp, "land": cOp, "lor": cOp, "bmod": cOp,
	"sin": cFunc, "cos": cFunc, "tan": cFunc, "sec": cFunc, "csc": cFunc, "cot": cFunc,
	"arcsin": cFunc, "arccos": cFunc, "arctan": cFunc, "arcsec": cFunc, "arccsc": cFunc,
	"arccot": cFunc, "sinh": cFunc, "cosh": cFunc, "tanh": cFunc, "coth": cFunc, "sech": cFunc,
	"csch": cFunc, "log": cFunc, "ln": cFunc, "lg": cFunc, "exp": cFunc, "det": cFunc,
	"gcd": cFunc, "lcm": cFunc, "max": cFunc, "min": cFunc, "arg": cFunc, "deg": cFunc,
	"arcsinh": cFunc, "arccosh": cFunc, "arctanh": cFunc, "arsinh": cFunc, "arcosh": cFunc, "artanh": cFunc,
	"mod": cOp,
	"pi":  cConst, "infty": cConst, "infinity": cConst, "emptyset": cConst, "varnothing": cConst,
	"imath": cConst, "ldots": cConst, "cdots": cConst, "dots": cConst, "vdots": cConst,
	"ddots": cConst, "dotsc": cConst, "dotsb": cConst,
	"alpha": cGreek, "beta": cGreek, "gamma": cGreek, "delta": cGreek, "epsilon": cGreek,
	"varepsilon": cGreek, "zeta": cGreek, "eta": cGreek, "theta": cGreek, "vartheta": cGreek,
	"iota": cGreek, "kappa": cGreek, "lambda": cGreek, "mu": cGreek, "nu": cGreek, "xi": cGreek,
	"omicron": cGreek, "rho": cGreek, "varrho": cGreek, "sigma": cGreek, "varsigma": cGreek,
	"tau": cGreek, "upsilon": cGreek, "phi": cGreek, "varphi": cGreek, "chi": cGreek,
	"psi": cGreek, "omega": cGreek, "Gamma": cGreek, "Delta": cGreek, "Theta": cGreek,
	"Lambda": cGreek, "Xi": cGreek, "Sigma": cGreek, "Upsilon": cGreek, "Phi": cGreek,
	"Psi": cGreek, "Omega": cGreek, "ell": cGreek, "angle": cGreek, "triangle": cGreek,
	"frac": cStruct, "dfrac": cStruct, "tfrac": cStruct, "cfrac": cStruct, "sqrt": cStruct,
	"binom": cStruct, "dbinom": cStruct, "tbinom": cStruct, "begin": cStruct, "end": cStruct,
	"boxed": cStruct, "fbox": cStruct, "lfloor": cStruct, "rfloor": cStruct, "lceil": cStruct,
	"rceil": cStruct, "langle": cStruct, "rangle": cStruct, "vert": cStruct, "lvert": cStruct,
	"rvert": cStruct, "Vert": cStruct, "lVert": cStruct, "rVert": cStruct, "sum": cStruct,
	"prod": cStruct, "overline": cStruct, "not": cStruct, "choose": cStruct, "lbrace": cStruct,
	"rbrace": cStruct, "lbrack": cStruct, "rbrack": cStruct, "pmod": cStruct,
}

// funcAliases maps other spellings of named functions (\operatorname{asin},
// \arsinh) to the names the evaluator knows.
var funcAliases = map[string]string{
	"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asec": "arcsec", "acsc": "arccsc",
	"acot": "arccot", "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "arsinh": "arcsinh",
	"arcosh": "arccosh", "artanh": "arctanh", "tg": "tan", "ctg": "cot", "arctg": "arctan",
	"floor": "floor", "ceil": "ceil", "ceiling": "ceil", "sgn": "sgn", "sign": "sgn",
}

// funcAlias returns the evaluator's name for a function written as name.
func funcAlias(name string) (string, bool) {
	if f, ok := funcAliases[name]; ok {
		return f, true
	}
	if commands[name] == cFunc {
		if f, ok := funcAliases[name]; ok {
			return f, true
		}
		return name, true
	}
	return "", false
}

// knownCommandPrefix reports whether name, or a prefix of it of at least two
// letters, is a LaTeX command this package knows (`\quadx` is `\quad x`).
func knownCommandPrefix(name string) bool {
	if _, ok := commands[name]; ok {
		return true
	}
	for n := len(name) - 1; n >= 2; n-- {
		if _, ok := commands[name[:n]]; ok {
			return true
		}
	}
	return false
}

func knownCommandExact(name string) bool {
	_, ok := commands[name]
	return ok
}

// lex splits a cleaned answer into tokens. It never fails except when the
// token cap is hit.
func lex(s string) ([]token, error) {
	toks := make([]token, 0, len(s)/2+2)
	space := false
	// closers of \text{...} / \mathrm{...} groups: byte offset and mode.
	type group struct {
		end  int
		text bool
	}
	var groups []group
	textDepth, fontDepth := 0, 0
	// args: for each open parenthesis, whether it opened the argument list
	// of a function of several arguments.
	var args []bool
	multiArg := func() bool {
		if len(toks) == 0 {
			return false
		}
		switch t := toks[len(toks)-1]; t.kind {
		case tCmd, tWord:
			switch strings.ToLower(t.text) {
			case "gcd", "lcm", "max", "min":
				return true
			}
		}
		return false
	}
	nl := false
	emit := func(k tokKind, text string, pos int) {
		toks = append(toks, token{kind: k, text: text, space: space, nl: nl, inText: textDepth > 0, inFont: fontDepth > 0, pos: pos})
		space, nl = false, false
	}
	for i := 0; i < len(s); {
		if len(toks) > maxTokens {
			return nil, errTooLong
		}
		if n := len(groups); n > 0 && groups[n-1].end == i {
			if groups[n-1].text {
				textDepth--
			} else {
				fontDepth--
			}
			groups = groups[:n-1]
			i++
			space = true
			continue
		}
		c := s[i]
		switch {
		case c == ' ' || c == '\n' || c == '~':
			space = true
			if c == '\n' {
				nl = true
			}
			i++
		case isDigit(c) || (c == '.' && i+1 < len(s) && isDigit(s[i+1])):
			// Inside the argument list of gcd, lcm, max, min a comma
			// separates arguments: \gcd(830,450) is not 830450.
			commas := len(args) == 0 || !args[len(args)-1]
			text, n := scanNumber(s[i:], commas)
			emit(tNum, text, i)
			i += n
		case isLetter(c):
			j := i + 1
			for j < len(s) && isLetter(s[j]) {
				j++
			}
			// "1orW(x)": a connector glued to a capitalised name.
			for _, w := range [...]string{"or", "and"} {
				if j-i > len(w) && s[i:i+len(w)] == w && s[i+len(w)] >= 'A' && s[i+len(w)] <= 'Z' {
					j = i + len(w)
				}
			}
			if j-i == 1 {
				emit(tIdent, s[i:j], i)
			} else {
				emit(tWord, s[i:j], i)
			}
			i = j
		case c >= 0x80:
			// Non-ASCII letters (CJK, accented prose): one prose word.
			j := i + 1
			for j < len(s) && s[j] >= 0x80 {
				j++
			}
			emit(tWord, s[i:j], i)
			i = j
		case c == '\\':
			if i+1 >= len(s) {
				i++
				continue
			}
			n := s[i+1]
			if !isLetter(n) {
				switch n {
				case '\\':
					emit(tRowSep, `\\`, i)
				case '{', '}':
					emit(tOp, s[i:i+2], i)
				case '|':
					emit(tOp, "|", i)
				case '%':
					emit(tOp, "%", i)
				default: // \, \; \: \! \  \$ \& \# and others: spacing or noise
					space = true
				}
				i += 2
				continue
			}
			j := i + 1
			for j < len(s) && isLetter(s[j]) {
				j++
			}
			name := s[i+1 : j]
			if _, ok := commands[name]; !ok {
				// `\quadx`: split off the longest known command.
				for k := len(name) - 1; k >= 2; k-- {
					if _, ok := commands[name[:k]]; ok {
						name = name[:k]
						j = i + 1 + k
						break
					}
				}
			}
			i = j
			switch commands[name] {
			case cSkip:
				if name == "quad" || name == "qquad" {
					space = true
				}
				if (name == "left" || name == "right") && i < len(s) && s[i] == '.' {
					i++
				}
				continue
			case cSkipArg:
				i = skipSpaces(s, i)
				if i < len(s) && s[i] == '{' {
					i = matchBrace(s, i) + 1
				}
				continue
			case cText, cFont:
				i = skipSpaces(s, i)
				if name == "operatorname" && i < len(s) && s[i] == '{' {
					// \operatorname{floor}, \operatorname{asin}: a function.
					e := matchBrace(s, i)
					if e < len(s) {
						if f, ok := funcAlias(strings.TrimSpace(s[i+1 : e])); ok {
							emit(tCmd, f, i)
							i = e + 1
							continue
						}
					}
				}
				if i < len(s) && s[i] == '{' {
					e := matchBrace(s, i)
					if e < len(s) {
						isText := commands[name] == cText
						groups = append(groups, group{end: e, text: isText})
						if isText {
							textDepth++
						} else {
							fontDepth++
						}
						space = true
						i++
						continue
					}
				}
				continue
			}
			if name == "begin" || name == "end" {
				i = skipSpaces(s, i)
				env := ""
				if i < len(s) && s[i] == '{' {
					e := matchBrace(s, i)
					if e < len(s) {
						env = strings.TrimSuffix(strings.TrimSpace(s[i+1:e]), "*")
						i = e + 1
					}
				}
				if name == "begin" && env == "array" {
					i = skipSpaces(s, i)
					if i < len(s) && s[i] == '{' {
						i = matchBrace(s, i) + 1
					}
				}
				emit(tCmd, name, i)
				toks[len(toks)-1].inText = false
				toks = append(toks, token{kind: tWord, text: env, pos: i})
				continue
			}
			emit(tCmd, name, i)
		default:
			op := s[i : i+1]
			switch op {
			case "(":
				args = append(args, multiArg())
			case ")":
				if len(args) > 0 {
					args = args[:len(args)-1]
				}
			}
			k := 1
			if i+1 < len(s) {
				switch s[i : i+2] {
				case "<=", ">=", "!=", "=<", "=>", "==", "**":
					op = s[i : i+2]
					k = 2
				}
			}
			switch op {
			case "=<":
				op = "<="
			case "==":
				op = "="
			case "**": // markdown bold inside an answer
				space = true
				i += k
				continue
			}
			emit(tOp, op, i)
			i += k
		}
	}
	toks = append(toks, token{kind: tEOF, pos: len(s)})
	return toks, nil
}

func skipSpaces(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n') {
		i++
	}
	return i
}

// matchBrace returns the index of the brace closing the one at s[i], or
// len(s) when it is unbalanced. Escaped braces \{ \} do not count.
func matchBrace(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return len(s)
}

// europeanNumber reads 1.234,5 or 1.234.567 at s (the first digit group
// has length i): groups of three digits after dots, and either a decimal
// comma or at least two dots. "1.234" alone stays the decimal 1.234.
func europeanNumber(s string, i int) (string, int, bool) {
	if i < 1 || i > 3 {
		return "", 0, false
	}
	j, groups := i, 0
	for j+3 < len(s) && s[j] == '.' && isDigit(s[j+1]) && isDigit(s[j+2]) && isDigit(s[j+3]) && (j+4 == len(s) || !isDigit(s[j+4])) {
		j += 4
		groups++
	}
	if groups == 0 {
		return "", 0, false
	}
	digits := strings.ReplaceAll(s[:j], ".", "")
	if j+1 < len(s) && s[j] == ',' && isDigit(s[j+1]) {
		k := j + 1
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		return digits + "." + s[j+1:k], k, true
	}
	if groups >= 2 && (j == len(s) || s[j] != '.') {
		return digits, j, true
	}
	return "", 0, false
}

// scanNumber reads a number at the start of s: digits with thousands
// separators ("7,425,000", "1 000"), a decimal part, and an exponent
// ("1.5e-3"). It returns the canonical text (separators removed) and the
// number of bytes consumed.
func scanNumber(s string, commas bool) (string, int) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intEnd := i
	var b []byte
	// European grouping: 1.234,5 and 1.234.567 (dots group thousands, a
	// comma is the decimal point).
	if t, n, ok := europeanNumber(s, i); ok {
		return t, n
	}
	// Thousands groups: only after a first group of 1-3 digits that is not
	// a lone 0 (0,125 is a decimal comma, never a thousands separator).
	if i >= 1 && i <= 3 && !(i == 1 && s[0] == '0') {
		j := i
		grouped := false
		for j+3 < len(s) && (s[j] == ',' && commas || s[j] == ' ') && j+4 <= len(s) && isDigit(s[j+1]) && isDigit(s[j+2]) && isDigit(s[j+3]) && (j+4 == len(s) || !isDigit(s[j+4])) {
			if s[j] == ' ' && j+4 < len(s) && s[j+4] == ',' {
				// "1 000,000" mixes separators: stop; "1 000,5" has a
				// decimal comma after the group.
				k := j + 5
				for k < len(s) && isDigit(s[k]) {
					k++
				}
				if k-(j+5) == 3 || k == j+5 {
					break
				}
			}
			if !grouped {
				b = append(b, s[:i]...)
				grouped = true
			}
			b = append(b, s[j+1:j+4]...)
			j += 4
			// Separators must be consistent: stop if the next one differs.
			if j < len(s) && s[j] != s[j-4] {
				break
			}
		}
		if grouped {
			i = j
			intEnd = i
			// 1 000,5: after space groups a comma is the decimal point.
			if s[j-4] == ' ' && i+1 < len(s) && s[i] == ',' && isDigit(s[i+1]) {
				k := i + 1
				for k < len(s) && isDigit(s[k]) {
					k++
				}
				b = append(b, '.')
				b = append(b, s[i+1:k]...)
				return string(b), k
			}
		}
	}
	if b == nil {
		b = append(b, s[:intEnd]...)
	}
	if i < len(s) && s[i] == '.' && i+1 < len(s) && isDigit(s[i+1]) {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		b = append(b, s[i:j]...)
		i = j
	}
	// Exponent: 1e5, 2.5E-3 (not "2e" or "2ex").
	if i+1 < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k > j && (k == len(s) || !isLetter(s[k])) && k-j <= 4 {
			b = append(b, 'e')
			b = append(b, s[i+1:k]...)
			i = k
		}
	}
	return string(b), i
}

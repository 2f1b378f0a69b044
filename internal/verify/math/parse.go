package math

import (
	"errors"
	"math/big"
	"strings"
)

// parsed is the result of reading one answer.
type parsed struct {
	root *node
	// prose is set when the answer contains words that are neither units,
	// connectors nor function names: it is text, not mathematics.
	prose bool
	// digits is set when the answer contains a digit.
	digits bool
}

var errParse = errors.New("cannot parse answer")

type parser struct {
	toks     []token
	i        int
	depth    int
	err      error
	absDepth int
	inMatrix int
	prose    bool
}

// parseAnswer parses a cleaned answer. The error says why it could not be
// read; the caller then falls back to text comparison.
func parseAnswer(s string) (parsed, error) {
	toks, err := lex(s)
	if err != nil {
		return parsed{}, err
	}
	p := &parser{toks: toks}
	root := p.parseList(nil)
	if p.err == nil && p.peek().kind != tEOF {
		p.fail("unexpected " + describe(p.peek()))
	}
	out := parsed{root: root, prose: p.prose}
	for _, t := range toks {
		if t.kind == tNum {
			out.digits = true
			break
		}
	}
	if p.err != nil {
		return out, p.err
	}
	if root == nil {
		return out, errors.New("empty answer")
	}
	return out, nil
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of answer"
	case tCmd:
		return `"\` + t.text + `"`
	case tRowSep:
		return `"\\"`
	}
	return `"` + t.text + `"`
}

func (p *parser) fail(msg string) *node {
	if p.err == nil {
		p.err = errors.New(msg)
	}
	return &node{op: opText, name: "?"}
}

// failLimit records that the answer went past a cap (see limits.go). It
// overrides an ordinary parse error: an answer cut short by a cap must not
// be reported, or graded, as merely malformed.
func (p *parser) failLimit(e *limitError) *node {
	if _, isLimit := p.err.(*limitError); !isLimit {
		p.err = e
	}
	return &node{op: opText, name: "?"}
}

func (p *parser) peek() token {
	for {
		t := p.toks[p.i]
		if t.kind == tOp && t.text == "&" && p.inMatrix == 0 {
			p.i++
			continue
		}
		return t
	}
}

func (p *parser) peekAt(k int) token {
	j := p.i
	for n := 0; ; j++ {
		if j >= len(p.toks) {
			return p.toks[len(p.toks)-1]
		}
		t := p.toks[j]
		if t.kind == tOp && t.text == "&" && p.inMatrix == 0 {
			continue
		}
		if n == k {
			return t
		}
		n++
	}
}

func (p *parser) next() token {
	t := p.peek()
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) isOp(s string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == s
}

func (p *parser) isCmd(s string) bool {
	t := p.peek()
	return t.kind == tCmd && t.text == s
}

func (p *parser) enter() bool {
	p.depth++
	if p.depth > maxDepth {
		p.failLimit(errTooDeep)
		return false
	}
	return p.err == nil
}

func (p *parser) leave() { p.depth-- }

func isConnector(t token) bool {
	if t.kind != tWord {
		return false
	}
	switch strings.ToLower(t.text) {
	case "and", "or", "et", "und":
		return true
	}
	return false
}

func (p *parser) atSeparator() bool {
	t := p.peek()
	if t.kind == tOp && (t.text == "," || t.text == ";") {
		return true
	}
	if t.kind == tRowSep && p.inMatrix == 0 {
		return true
	}
	return isConnector(t)
}

// closers end a list: the caller checks which one it is.
func (p *parser) atCloser() bool {
	t := p.peek()
	switch t.kind {
	case tEOF:
		return true
	case tOp:
		switch t.text {
		case ")", "]", "}", `\}`:
			return true
		case "|":
			return p.absDepth > 0
		case "&":
			return p.inMatrix > 0
		}
	case tRowSep:
		return p.inMatrix > 0
	case tCmd:
		switch t.text {
		case "end", "rangle", "rfloor", "rceil", "rvert", "rVert", "rbrace", "rbrack":
			return true
		case "vert", "Vert":
			return p.absDepth > 0
		}
	}
	return false
}

// parseList reads items separated by ',', ';', "and", "or". One item is
// returned as itself; several as opList. A two-integer list written "1,22"
// keeps its decimal-comma reading in alt.
func (p *parser) parseList(_ []string) *node {
	if !p.enter() {
		return p.fail("invalid answer")
	}
	defer p.leave()
	var items []*node
	commaAlt := false
	for p.err == nil {
		for p.atSeparator() {
			p.next()
		}
		if p.atCloser() {
			break
		}
		start := p.i
		item := p.parseRel()
		if p.err != nil {
			return p.fail("invalid answer")
		}
		if p.i == start {
			p.fail("unexpected " + describe(p.peek()))
			return p.fail("invalid answer")
		}
		items = append(items, item)
		if len(items) > maxElems {
			p.failLimit(errTooMany)
			return p.fail("invalid answer")
		}
		if len(items) == 1 && item.op == opNum && item.lit && !item.dec && p.isOp(",") {
			t := p.peek()
			n := p.peekAt(1)
			if !n.space && n.kind == tNum && !strings.ContainsAny(n.text, ".e") && p.toks[p.i-1].kind == tNum && !t.space {
				commaAlt = true
			}
		}
		if !p.atSeparator() {
			// Juxtaposed tuples "(1,2) (3,4)" are a list.
			prev := items[len(items)-1]
			if (prev.op == opTuple || prev.op == opSet) && (p.isOp("(") || p.isOp("[") || p.isOp(`\{`)) {
				continue
			}
			break
		}
	}
	switch len(items) {
	case 0:
		return nil
	case 1:
		return items[0]
	}
	n := &node{op: opList, kids: items}
	if commaAlt && len(items) == 2 && items[1].op == opNum && items[1].lit && !items[1].dec {
		// "1,22" may be the decimal 1.22.
		a := items[0].num.Num().String() + "." + p.rawDigits(items[1])
		if r, ok := new(big.Rat).SetString(a); ok {
			n.alt = r
		}
	}
	return n
}

// rawDigits returns the literal digits of a number node (keeping leading
// zeros: "1,05" is 1.05).
func (p *parser) rawDigits(n *node) string {
	for j := p.i - 1; j >= 0; j-- {
		if p.toks[j].kind == tNum {
			return p.toks[j].text
		}
	}
	return n.num.Num().String()
}

var relNames = map[string]string{
	"=": "=", "<": "<", ">": ">", "<=": "<=", ">=": ">=", "!=": "!=", "=>": "=>",
	"le": "<=", "leq": "<=", "leqslant": "<=", "ge": ">=", "geq": ">=", "geqslant": ">=",
	"ne": "!=", "neq": "!=", "approx": "≈", "sim": "≈", "simeq": "≈", "doteq": "≈", "cong": "≈",
	"in": "in", "lt": "<", "gt": ">", "equiv": "≡", "to": "=>", "rightarrow": "=>",
	"Rightarrow": "=>", "implies": "=>", "Longrightarrow": "=>", "longrightarrow": "=>",
	"iff": "=>", "mapsto": "=>", "notin": "notin", "subset": "subset", "subseteq": "subset",
	"propto": "propto",
}

func (p *parser) relop() (string, bool) {
	t := p.peek()
	switch t.kind {
	case tOp:
		r, ok := relNames[t.text]
		return r, ok
	case tCmd:
		if t.text == "not" {
			n := p.peekAt(1)
			if n.kind == tOp && n.text == "=" {
				return "!=", true
			}
			return "", false
		}
		if commands[t.text] == cRel {
			r, ok := relNames[t.text]
			return r, ok
		}
	}
	return "", false
}

func (p *parser) parseRel() *node {
	if r, ok := p.relop(); ok && r == "≈" {
		// "≈ 1.732": a value given as an approximation.
		p.next()
		return &node{op: opApprox, kids: []*node{p.parseRatio()}}
	}
	first := p.parseRatio()
	r, ok := p.relop()
	if !ok || p.err != nil {
		return first
	}
	n := &node{op: opRel, kids: []*node{first}}
	for ok && p.err == nil {
		if p.isCmd("not") {
			p.next()
		}
		p.next()
		n.rels = append(n.rels, r)
		n.kids = append(n.kids, p.parseRatio())
		if len(n.kids) > maxElems {
			return p.failLimit(errTooMany)
		}
		r, ok = p.relop()
	}
	return n
}

func (p *parser) parseRatio() *node {
	a := p.parseSetOps()
	for p.err == nil && (p.isOp(":") || p.isCmd("colon")) {
		p.next()
		b := p.parseSetOps()
		a = &node{op: opRatio, kids: []*node{a, b}}
	}
	return a
}

func (p *parser) setOp() string {
	t := p.peek()
	if t.kind == tCmd && (t.text == "cup" || t.text == "cap" || t.text == "setminus") {
		return t.text
	}
	if t.kind == tIdent && t.text == "U" {
		n := p.peekAt(1)
		if n.kind == tOp && (n.text == "(" || n.text == "[" || n.text == `\{`) {
			return "cup"
		}
	}
	return ""
}

func (p *parser) parseSetOps() *node {
	a := p.parseAdd()
	op := p.setOp()
	if op == "" || p.err != nil {
		return a
	}
	n := &node{op: opUnion, name: op, kids: []*node{a}}
	for op != "" && p.err == nil {
		if op != n.name {
			// Mixed set operations: nest left to right.
			n = &node{op: opUnion, name: op, kids: []*node{n}}
		}
		p.next()
		n.kids = append(n.kids, p.parseAdd())
		if len(n.kids) > maxElems {
			return p.failLimit(errTooMany)
		}
		op = p.setOp()
	}
	return n
}

func (p *parser) parseAdd() *node {
	if !p.enter() {
		return p.fail("invalid answer")
	}
	defer p.leave()
	var terms []*node
	var acc *node
	flush := func() *node {
		if acc != nil && len(terms) == 0 {
			return acc
		}
		all := terms
		if acc != nil {
			all = append([]*node{acc}, terms...)
		}
		if len(all) == 1 {
			return all[0]
		}
		return &node{op: opAdd, kids: all}
	}
	terms = append(terms, p.parseTerm())
	for p.err == nil {
		t := p.peek()
		switch {
		case t.kind == tCmd && t.text == "over":
			// {a \over b}: TeX's fraction of everything on each side.
			p.next()
			num := flush()
			den := p.parseAdd()
			return &node{op: opDiv, kids: []*node{num, den}}
		case t.kind == tOp && t.text == "+":
			p.next()
			terms = append(terms, p.parseTerm())
		case t.kind == tOp && t.text == "-":
			p.next()
			terms = append(terms, &node{op: opNeg, kids: []*node{p.parseTerm()}})
		case t.kind == tCmd && (t.text == "pm" || t.text == "mp"):
			p.next()
			left := flush()
			right := p.parseTerm()
			if t.text == "mp" {
				right = &node{op: opNeg, kids: []*node{right}}
			}
			acc = &node{op: opPM, kids: []*node{left, right}}
			terms = terms[:0]
		default:
			return flush()
		}
		if len(terms) > maxElems {
			return p.failLimit(errTooMany)
		}
	}
	return flush()
}

// unitWords are words that, after a value, are dropped as units.
var unitWords = map[string]bool{
	"cm": true, "mm": true, "km": true, "m": true, "kg": true, "mg": true, "g": true, "ml": true,
	"ft": true, "in": true, "yd": true, "mi": true, "hr": true, "oz": true, "lb": true, "lbs": true,
	"s": true, "sec": true, "min": true, "h": true, "l": true, "cc": true, "mph": true, "kph": true,
}

func isPercentWord(w string) bool {
	switch strings.ToLower(w) {
	case "percent", "pct", "percents", "percentage":
		return true
	}
	return false
}

func isDegreeWord(w string) bool {
	switch strings.ToLower(w) {
	case "degree", "degrees", "deg":
		return true
	}
	return false
}

var funcWords = map[string]string{
	"asin": "arcsin", "acos": "arccos", "atan": "arctan", "arcsinh": "arcsinh", "arccosh": "arccosh",
	"arctanh": "arctanh", "floor": "floor", "ceil": "ceil", "mod": "mod",
	"sin": "sin", "cos": "cos", "tan": "tan", "sec": "sec", "csc": "csc", "cot": "cot",
	"arcsin": "arcsin", "arccos": "arccos", "arctan": "arctan", "log": "log", "ln": "ln",
	"exp": "exp", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "lg": "lg", "det": "det",
	"gcd": "gcd", "lcm": "lcm", "max": "max", "min": "min", "arcsec": "arcsec", "arccsc": "arccsc",
	"arccot": "arccot", "coth": "coth", "sech": "sech", "csch": "csch", "arg": "arg", "deg": "deg",
}

// isTailWord reports whether t, following a value, starts a unit/prose tail.
func (p *parser) isTailWord(t token) bool {
	switch t.kind {
	case tWord:
		if isConnector(t) {
			return false
		}
		if t.inFont {
			return unitWords[t.text]
		}
		if _, ok := funcWords[strings.ToLower(t.text)]; ok && !t.inText {
			return false
		}
		switch strings.ToLower(t.text) {
		case "pi", "sqrt", "infty", "infinity":
			return false
		}
		if len(t.text) == 2 && !t.inText && !unitWords[t.text] && t.text[0] < 0x80 {
			return false // "xy": a product of two variables
		}
		return true
	case tIdent:
		return t.inText || (t.inFont && unitWords[t.text])
	}
	return false
}

// consumeTail reads a unit or prose tail ("cm^2", "words per minute") up to
// a separator, relation or closer, and reports percent/degree words in it.
func (p *parser) consumeTail() (percent, degree bool) {
	for p.err == nil {
		t := p.peek()
		if p.atCloser() || p.atSeparator() {
			return
		}
		if _, ok := p.relop(); ok {
			return
		}
		switch t.kind {
		case tWord, tIdent, tNum:
			if isPercentWord(t.text) {
				percent = true
			}
			if isDegreeWord(t.text) {
				degree = true
			}
			if t.kind == tNum && !t.inText {
				return
			}
			p.next()
		case tOp:
			switch t.text {
			case "^", "/", ".", "'", "-", "(", ")", "*":
				if t.text == ")" && !t.inText {
					return
				}
				p.next()
				if t.text == "^" {
					// cm^2, cm^{3}
					if nx := p.peek(); nx.kind == tNum {
						p.next()
					} else if nx.kind == tOp && nx.text == "{" {
						p.parseBraced()
					}
				}
			case "%":
				percent = true
				p.next()
			default:
				return
			}
		case tCmd:
			if t.text == "circ" || t.text == "degree" {
				degree = true
			}
			if t.text == "circ" || t.text == "degree" || t.text == "cdot" || t.text == "times" {
				p.next()
				continue
			}
			return
		default:
			return
		}
	}
	return
}

func (p *parser) canImplicit(t token) bool {
	switch t.kind {
	case tNum, tIdent:
		return true
	case tWord:
		return !isConnector(t)
	case tOp:
		switch t.text {
		case "(", "{", "[":
			return true
		case "|":
			return p.absDepth == 0
		}
	case tCmd:
		switch commands[t.text] {
		case cFunc, cGreek:
			return true
		case cConst:
			return t.text == "pi" || t.text == "imath"
		case cStruct:
			switch t.text {
			case "frac", "dfrac", "tfrac", "cfrac", "sqrt", "binom", "dbinom", "tbinom", "lfloor",
				"lceil", "sum", "prod", "overline", "begin", "boxed":
				return true
			case "vert", "lvert":
				return p.absDepth == 0
			}
		case 0:
			return true // unknown command: a named symbol
		}
	}
	return false
}

func (p *parser) parseTerm() *node {
	if !p.enter() {
		return p.fail("invalid answer")
	}
	defer p.leave()
	factors := []*node{p.parseUnary()}
	product := func() *node {
		if len(factors) == 1 {
			return factors[0]
		}
		return &node{op: opMul, kids: factors}
	}
	for p.err == nil {
		t := p.peek()
		switch {
		case t.kind == tOp && (t.text == "*") || t.kind == tCmd && (t.text == "cdot" || t.text == "times" || t.text == "ast"):
			p.next()
			factors = append(factors, p.parseUnary())
		case t.kind == tOp && t.text == "/" || t.kind == tCmd && t.text == "div":
			p.next()
			d := p.parseUnary()
			factors = []*node{{op: opDiv, kids: []*node{product(), d}}}
		case t.kind == tCmd && (t.text == "mod" || t.text == "bmod"):
			// a \bmod b: the remainder, with the sign of b (floor division).
			p.next()
			d := p.parseUnary()
			factors = []*node{{op: opFunc, name: "mod", kids: []*node{product(), d}}}
		case p.isTailWord(t):
			if wordsOnly(factors) && proseWord(t.text) {
				// "so we conclude that ...": two-letter words read as
				// letters, then a word: this is a sentence.
				p.prose = true
			}
			percent, degree := p.consumeTail()
			v := product()
			if percent {
				v = &node{op: opPercent, kids: []*node{v}}
			} else if degree {
				v = &node{op: opDegree, kids: []*node{v}}
			}
			return v
		case p.canImplicit(t):
			last := factors[len(factors)-1]
			if (last.op == opTuple || last.op == opSet || last.op == opMatrix && t.kind == tOp) && t.kind == tOp && t.text == "(" {
				return product()
			}
			if t.kind == tNum && last.op == opNum && t.space && len(factors) == 1 && !t.nl {
				if m := p.mixedNumber(last); m != nil {
					factors[0] = m
					continue
				}
			}
			if t.kind == tNum && last.op == opNum && t.space {
				// "2 3" is not a product; let the caller fail or split.
				return product()
			}
			save := p.i
			g := p.parsePower()
			if t.kind == tOp && t.text == "[" && (g.op == opTuple || p.err != nil) {
				// [a+b][c+d] multiplies, but [0,1] after a value is not a factor.
				p.i, p.err = save, nil
				return product()
			}
			if len(factors) == 1 && last.op == opNum && last.lit && !last.dec && last.num.IsInt() &&
				g.op == opDiv && g.fracL {
				// Mixed number: 2\frac{1}{2} = 5/2.
				factors[0] = &node{op: opAdd, kids: []*node{last, g}}
				continue
			}
			factors = append(factors, g)
		default:
			return product()
		}
		if len(factors) > maxElems {
			return p.failLimit(errTooMany)
		}
	}
	return product()
}

// mixedNumber reads the fraction part of a plain-text mixed number after
// its whole part w ("3 1/4" = 13/4, "-4 4/9" = -40/9, "1 000 4/9"): the
// whole part is an integer literal, the fraction a/b of integer literals
// with 0 <= a < b, written on the same line without spaces around "/". A
// percent sign after it applies to the whole number. It returns nil (and
// consumes nothing) when the tokens are not a mixed number.
func (p *parser) mixedNumber(w *node) *node {
	if !(w.lit || w.signedLit) || w.dec || !w.num.IsInt() {
		return nil
	}
	j := p.i
	if j+2 >= len(p.toks) {
		return nil
	}
	a, slash, b := p.toks[j], p.toks[j+1], p.toks[j+2]
	if a.kind != tNum || slash.kind != tOp || slash.text != "/" || slash.space || b.kind != tNum || b.space ||
		strings.ContainsAny(a.text+b.text, ".e") {
		return nil
	}
	if j+3 < len(p.toks) {
		if nx := p.toks[j+3]; !nx.space && (nx.kind == tNum || nx.kind == tOp && nx.text == "/" || nx.kind == tOp && nx.text == "^") {
			return nil
		}
	}
	num, ok1 := new(big.Rat).SetString(a.text)
	den, ok2 := new(big.Rat).SetString(b.text)
	if !ok1 || !ok2 || den.Sign() == 0 || num.Cmp(den) >= 0 {
		return nil
	}
	p.i = j + 3
	v := new(big.Rat).Add(new(big.Rat).Abs(w.num), new(big.Rat).Quo(num, den))
	if w.num.Sign() < 0 {
		v.Neg(v)
	}
	n := &node{op: opNum, num: v}
	if p.isOp("%") {
		p.next()
		n = &node{op: opPercent, kids: []*node{n}}
	}
	return n
}

// wordsOnly reports whether factors all come from splitting short words
// into letters ("so" -> s·o).
func wordsOnly(factors []*node) bool {
	for _, f := range factors {
		if !f.fromWord {
			return false
		}
	}
	return len(factors) > 0
}

func (p *parser) parseUnary() *node {
	if !p.enter() {
		return p.fail("invalid answer")
	}
	defer p.leave()
	t := p.peek()
	switch {
	case t.kind == tOp && t.text == "-":
		p.next()
		k := p.parseUnary()
		if k != nil && k.op == opNum && k.lit {
			return &node{op: opNum, num: new(big.Rat).Neg(k.num), dec: k.dec, lit: false, signedLit: true, places: k.places, sig: k.sig}
		}
		return &node{op: opNeg, kids: []*node{k}}
	case t.kind == tOp && t.text == "+":
		p.next()
		k := p.parseUnary()
		if k != nil && k.op == opNum && k.lit {
			c := *k
			c.lit, c.signedLit = false, true
			return &c
		}
		return k
	case t.kind == tCmd && (t.text == "pm" || t.text == "mp"):
		p.next()
		return &node{op: opPM, kids: []*node{intNode(0), p.parseUnary()}}
	}
	return p.parsePower()
}

func (p *parser) parsePower() *node {
	if !p.enter() {
		return p.fail("invalid answer")
	}
	defer p.leave()
	base := p.parsePostfix()
	for p.err == nil && p.isOp("^") {
		p.next()
		if p.isCmd("circ") || p.isCmd("degree") {
			p.next()
			base = &node{op: opDegree, kids: []*node{base}}
			continue
		}
		if p.isOp("{") {
			// ^{\circ}
			a, b, c := p.peekAt(1), p.peekAt(2), p.peekAt(0)
			_ = c
			if a.kind == tCmd && (a.text == "circ" || a.text == "degree") && b.kind == tOp && b.text == "}" {
				p.next()
				p.next()
				p.next()
				base = &node{op: opDegree, kids: []*node{base}}
				continue
			}
			if a.kind == tCmd && a.text == "prime" {
				p.next()
				p.next()
				if p.isOp("}") {
					p.next()
				}
				if base.op == opSym {
					base = &node{op: opSym, name: base.name + "'"}
				}
				continue
			}
		}
		if p.isCmd("prime") {
			p.next()
			if base.op == opSym {
				base = &node{op: opSym, name: base.name + "'"}
			}
			continue
		}
		if p.ordinalSuffix() {
			continue // 12^{th}: an ordinal, the number itself
		}
		e := p.parseExponent()
		if p.isOp("_") && (base.op == opSym || base.op == opConst) {
			// x^{2}_{1}: the subscript belongs to the base, x_1^2.
			p.next()
			base = &node{op: opSub, kids: []*node{base, p.parseSubscript()}}
		}
		base = &node{op: opPow, kids: []*node{base, e}}
		base = p.postfixOps(base)
	}
	return base
}

func (p *parser) parseExponent() *node {
	if !p.enter() {
		return p.fail("invalid answer")
	}
	defer p.leave()
	t := p.peek()
	switch {
	case t.kind == tOp && t.text == "{":
		return p.parseBraced()
	case t.kind == tOp && (t.text == "-" || t.text == "+"):
		p.next()
		e := p.parseExponent()
		if t.text == "-" {
			return &node{op: opNeg, kids: []*node{e}}
		}
		return e
	case t.kind == tOp && t.text == "(":
		return p.parsePrimary()
	case t.kind == tNum:
		p.next()
		return p.number(t)
	case t.kind == tWord && !t.inText:
		// x^ab: only the first letter is the exponent.
		return p.splitWord()
	}
	return p.parsePrimary()
}

// splitWord takes the first letter of a multi-letter word token as a
// symbol and leaves the rest in the stream.
func (p *parser) splitWord() *node {
	t := &p.toks[p.i]
	if len(t.text) < 2 || t.text[0] >= 0x80 {
		p.next()
		if t.text == "" || t.text[0] >= 0x80 {
			p.prose = true
			return &node{op: opText, name: t.text}
		}
		return symNode(t.text)
	}
	first := t.text[:1]
	if len(t.text) == 2 {
		t.kind = tIdent
	}
	t.text = t.text[1:]
	return symNode(first)
}

func symNode(name string) *node {
	switch name {
	case "e":
		return &node{op: opConst, name: "e"}
	case "i":
		return &node{op: opConst, name: "i"}
	}
	return &node{op: opSym, name: name}
}

func (p *parser) parsePostfix() *node {
	n := p.parsePrimary()
	return p.postfixOps(n)
}

func (p *parser) postfixOps(n *node) *node {
	for p.err == nil {
		t := p.peek()
		switch {
		case t.kind == tOp && t.text == "!":
			nx := p.peekAt(1)
			if nx.kind == tOp && nx.text == "=" {
				return n
			}
			p.next()
			n = &node{op: opFact, kids: []*node{n}}
		case t.kind == tOp && t.text == "'":
			p.next()
			if n.op == opSym {
				n = &node{op: opSym, name: n.name + "'"}
			} else if n.op == opSub {
				n = &node{op: opSub, kids: n.kids, name: n.name + "'"}
			}
		case t.kind == tOp && t.text == "_":
			p.next()
			sub := p.parseSubscript()
			if p.err != nil {
				return n
			}
			if n.op == opNum && n.lit && sub.op == opNum {
				// 204_5: a numeral in another base, kept literally.
				n = &node{op: opText, name: n.String() + "_" + sub.String()}
				continue
			}
			n = &node{op: opSub, kids: []*node{n, sub}}
		case t.kind == tOp && t.text == "%":
			p.next()
			n = &node{op: opPercent, kids: []*node{n}}
		case t.kind == tCmd && (t.text == "circ" || t.text == "degree"):
			p.next()
			n = &node{op: opDegree, kids: []*node{n}}
		case t.kind == tCmd && t.text == "pmod":
			p.next()
			p.arg()
		default:
			return n
		}
	}
	return n
}

func (p *parser) parseSubscript() *node {
	t := p.peek()
	switch {
	case t.kind == tOp && t.text == "{":
		// Subscripts are names: words in them (S_{MBCN}) are not prose.
		prose := p.prose
		n := p.parseBraced()
		p.prose = prose
		return n
	case t.kind == tNum:
		p.next()
		return p.number(t)
	case t.kind == tWord:
		return p.splitWord()
	}
	return p.parsePrimary()
}

func (p *parser) number(t token) *node {
	r, ok := new(big.Rat).SetString(t.text)
	if !ok {
		return p.fail("bad number " + t.text)
	}
	if r.Num().BitLen() > maxRatBits || r.Denom().BitLen() > maxRatBits {
		return p.failLimit(errNumTooBig)
	}
	n := numNode(r, strings.ContainsAny(t.text, ".eE"))
	n.places, n.sig = literalPrecision(t.text)
	return n
}

// literalPrecision returns the digits after the point and the significant
// digits of a number literal; places is -1 for a literal with an exponent.
func literalPrecision(text string) (places, sig int) {
	if strings.ContainsAny(text, "eE") {
		return -1, 0
	}
	places = 0
	if i := strings.IndexByte(text, '.'); i >= 0 {
		places = len(text) - i - 1
	}
	started := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '.' {
			continue
		}
		if c != '0' {
			started = true
		}
		if started {
			sig++
		}
	}
	return places, sig
}

// parseBraced reads {...} and returns its content (a list when it holds
// several items; an empty list for {}).
func (p *parser) parseBraced() *node {
	p.next() // {
	n := p.parseList(nil)
	if !p.isOp("}") {
		return p.fail("missing }")
	}
	p.next()
	if n == nil {
		return &node{op: opList}
	}
	return n
}

// arg reads one macro argument: a braced group, or a single character /
// command (\frac12, \sqrt2, \frac\pi2), or a parenthesised group (\sqrt(2)).
func (p *parser) arg() *node {
	if !p.enter() {
		return p.fail("invalid answer")
	}
	defer p.leave()
	t := p.peek()
	switch {
	case t.kind == tOp && t.text == "{":
		return p.parseBraced()
	case t.kind == tNum:
		tok := &p.toks[p.i]
		if len(tok.text) > 1 && tok.text[0] != '.' {
			d := tok.text[:1]
			tok.text = tok.text[1:]
			tok.space = false
			r := new(big.Rat)
			r.SetString(d)
			return numNode(r, false)
		}
		p.next()
		return p.number(t)
	case t.kind == tWord && !t.inText:
		return p.splitWord()
	case t.kind == tOp && t.text == "(":
		return p.parsePrimary()
	case t.kind == tOp && t.text == "-":
		p.next()
		return &node{op: opNeg, kids: []*node{p.arg()}}
	case t.kind == tEOF:
		return p.fail("missing argument")
	}
	return p.parsePrimary()
}

func (p *parser) parsePrimary() *node {
	if !p.enter() {
		return p.fail("invalid answer")
	}
	defer p.leave()
	t := p.peek()
	switch t.kind {
	case tEOF:
		return p.fail("unexpected end of answer")
	case tNum:
		p.next()
		n := p.number(t)
		if nx := p.peek(); nx.kind == tWord && !nx.space && isOrdinal(nx.text) {
			p.next() // 12th
		}
		return p.repeating(n, t)
	case tIdent:
		p.next()
		return symNode(t.text)
	case tWord:
		return p.word()
	case tRowSep:
		return p.fail(`unexpected "\\"`)
	case tOp:
		switch t.text {
		case "(", "[":
			return p.group()
		case "{":
			return p.parseBraced()
		case `\{`:
			p.next()
			items := p.parseList(nil)
			if !p.isOp(`\}`) {
				return p.fail(`missing \}`)
			}
			p.next()
			return &node{op: opSet, kids: flatten(items)}
		case "|":
			return p.abs("|", "|")
		}
		return p.fail("unexpected " + describe(t))
	case tCmd:
		return p.command()
	}
	return p.fail("unexpected " + describe(t))
}

// repeating reads 0.\overline{3} (a repeating decimal) after a number.
func (p *parser) repeating(n *node, t token) *node {
	j := p.i
	dot := false
	if p.isOp(".") {
		dot = true
		j++
	}
	if j >= len(p.toks) || p.toks[j].kind != tCmd || p.toks[j].text != "overline" {
		return n
	}
	if !dot && !strings.Contains(t.text, ".") {
		return n
	}
	save := p.i
	p.i = j + 1
	rep := p.arg()
	if p.err != nil || rep == nil || rep.op != opNum || !rep.num.IsInt() || rep.num.Sign() < 0 {
		p.i = save
		p.err = nil
		return n
	}
	digits := p.toks[p.i-1].text
	if len(digits) > 30 {
		return p.fail("repeating block too long")
	}
	// value = fixed + rep / (10^k (10^m - 1)), k = digits after the point in fixed.
	k := 0
	if i := strings.IndexByte(t.text, '.'); i >= 0 {
		k = len(t.text) - i - 1
	}
	m := len(digits)
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(m)), nil)
	den.Sub(den, big.NewInt(1))
	den.Mul(den, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil))
	frac := new(big.Rat).SetFrac(rep.num.Num(), den)
	return &node{op: opNum, num: new(big.Rat).Add(n.num, frac), lit: true}
}

func flatten(n *node) []*node {
	if n == nil {
		return nil
	}
	if n.op == opList {
		return n.kids
	}
	return []*node{n}
}

// group reads (..), [..] and the half-open intervals (..] and [..).
func (p *parser) group() *node {
	open := p.next().text
	if p.isOp(")") || p.isOp("]") {
		cl := p.next().text
		return &node{op: opTuple, left: open[0], right: cl[0]}
	}
	inner := p.parseList(nil)
	if p.err != nil {
		return p.fail("invalid answer")
	}
	if inner == nil {
		return p.fail("empty brackets")
	}
	if !p.isOp(")") && !p.isOp("]") {
		return p.fail("missing closing bracket")
	}
	cl := p.next().text
	if inner.op != opList {
		if open == "(" && cl == ")" || open == "[" && cl == "]" {
			if inner.op == opNum && (inner.lit || inner.signedLit) {
				c := *inner // "(11)": no longer a bare literal
				c.lit, c.signedLit = false, false
				return &c
			}
			return inner
		}
		return p.fail("mismatched brackets")
	}
	return &node{op: opTuple, kids: inner.kids, left: open[0], right: cl[0]}
}

func (p *parser) abs(open, closeTok string) *node {
	p.next()
	p.absDepth++
	inner := p.parseAdd()
	p.absDepth--
	t := p.peek()
	if !(t.kind == tOp && t.text == "|" || t.kind == tCmd && (t.text == "rvert" || t.text == "vert" || t.text == "rVert" || t.text == "Vert")) {
		return p.fail("missing closing |")
	}
	p.next()
	if inner != nil && inner.op == opMatrix {
		return &node{op: opFunc, name: "det", kids: []*node{inner}} // |A|: the determinant
	}
	return &node{op: opAbs, kids: []*node{inner}}
}

func (p *parser) word() *node {
	t := p.next()
	low := strings.ToLower(t.text)
	if t.inFont {
		if unitWords[t.text] {
			p.prose = true
		}
		return &node{op: opSym, name: t.text}
	}
	switch low {
	case "pi":
		return &node{op: opConst, name: "pi"}
	case "inf", "infty", "infinity":
		return &node{op: opConst, name: "inf"}
	case "sqrt":
		return &node{op: opRoot, kids: []*node{p.arg(), nil}}
	}
	if f, ok := funcWords[low]; ok && !t.inText {
		return p.function(f)
	}
	if len(t.text) == 2 && t.text[0] < 0x80 && !t.inText && !unitWords[t.text] {
		// "xy" is x*y.
		return &node{op: opMul, kids: []*node{symNode(t.text[:1]), symNode(t.text[1:])}, fromWord: true}
	}
	p.prose = true
	return &node{op: opText, name: low}
}

func (p *parser) command() *node {
	t := p.next()
	name := t.text
	switch name {
	case "frac", "dfrac", "tfrac", "cfrac":
		a := p.arg()
		b := p.arg()
		if p.err != nil {
			return p.fail("invalid answer")
		}
		n := &node{op: opDiv, kids: []*node{a, b}}
		n.fracL = a.op == opNum && a.lit && !a.dec && b.op == opNum && b.lit && !b.dec
		return n
	case "sqrt":
		var idx *node
		if p.isOp("[") {
			p.next()
			idx = p.parseList(nil)
			if !p.isOp("]") {
				return p.fail("missing ] in \\sqrt")
			}
			p.next()
		}
		return &node{op: opRoot, kids: []*node{p.arg(), idx}}
	case "binom", "dbinom", "tbinom":
		a := p.arg()
		b := p.arg()
		return &node{op: opBinom, kids: []*node{a, b}}
	case "pi":
		return &node{op: opConst, name: "pi"}
	case "infty", "infinity":
		return &node{op: opConst, name: "inf"}
	case "imath":
		return &node{op: opConst, name: "i"}
	case "emptyset", "varnothing":
		return &node{op: opSet}
	case "ldots", "cdots", "dots", "vdots", "ddots", "dotsc", "dotsb":
		return &node{op: opEllipsis}
	case "boxed", "fbox", "overline":
		return p.arg()
	case "lfloor", "lceil":
		inner := p.parseAdd()
		want := "rfloor"
		op := opFloor
		if name == "lceil" {
			want, op = "rceil", opCeil
		}
		if !p.isCmd(want) {
			return p.fail("missing \\" + want)
		}
		p.next()
		return &node{op: op, kids: []*node{inner}}
	case "langle":
		inner := p.parseList(nil)
		if !p.isCmd("rangle") {
			return p.fail("missing \\rangle")
		}
		p.next()
		return &node{op: opTuple, kids: flatten(inner), left: '<', right: '>'}
	case "lbrace":
		inner := p.parseList(nil)
		if !p.isCmd("rbrace") {
			return p.fail("missing \\rbrace")
		}
		p.next()
		return &node{op: opSet, kids: flatten(inner)}
	case "lbrack":
		inner := p.parseList(nil)
		if !p.isCmd("rbrack") {
			return p.fail("missing \\rbrack")
		}
		p.next()
		return &node{op: opTuple, kids: flatten(inner), left: '[', right: ']'}
	case "vert", "lvert", "Vert", "lVert":
		p.i--
		return p.abs(name, name)
	case "begin":
		return p.environment()
	case "sum", "prod":
		return p.sum(name)
	}
	if _, ok := funcAliases[name]; ok {
		return p.function(name)
	}
	switch commands[name] {
	case cGreek:
		return &node{op: opSym, name: name}
	case cFunc:
		return p.function(name)
	case 0:
		return &node{op: opSym, name: `\` + name}
	}
	return p.fail("unexpected " + describe(t))
}

func (p *parser) function(name string) *node {
	if f, ok := funcAliases[name]; ok {
		name = f
	}
	var pw, base *node
	for p.err == nil {
		if p.isOp("^") && pw == nil {
			p.next()
			pw = p.parseExponent()
			continue
		}
		if p.isOp("_") && base == nil {
			p.next()
			base = p.parseSubscript()
			continue
		}
		break
	}
	var argument *node
	switch {
	case p.isOp("("):
		argument = p.group()
	case p.isOp("{"):
		argument = p.parseBraced()
	default:
		argument = p.parsePower()
		for p.err == nil {
			t := p.peek()
			if (t.kind == tNum || t.kind == tIdent) && !p.isTailWord(t) {
				argument = &node{op: opMul, kids: []*node{argument, p.parsePower()}}
				continue
			}
			break
		}
	}
	if p.err != nil {
		return p.fail("invalid answer")
	}
	f := &node{op: opFunc, name: name, kids: flatten(argument)}
	if argument != nil && argument.op == opTuple && argument.left == '(' {
		f.kids = argument.kids
	}
	if (name == "floor" || name == "ceil") && len(f.kids) == 1 {
		op := opFloor
		if name == "ceil" {
			op = opCeil
		}
		f = &node{op: op, kids: f.kids}
	}
	if base != nil {
		f.kids = append(f.kids, base)
		f.name = name + "_"
	}
	if pw != nil {
		if pw.op == opNeg && pw.kids[0].op == opNum && pw.kids[0].num.Cmp(big.NewRat(1, 1)) == 0 ||
			pw.op == opNum && pw.num.Cmp(big.NewRat(-1, 1)) == 0 {
			switch name {
			case "sin", "cos", "tan", "sec", "csc", "cot":
				f.name = "arc" + name
				return f
			}
		}
		return &node{op: opPow, kids: []*node{f, pw}}
	}
	return f
}

func (p *parser) sum(name string) *node {
	var v, lo, hi *node
	for p.err == nil {
		if p.isOp("_") && lo == nil {
			p.next()
			sub := p.parseSubscript()
			if sub != nil && sub.op == opRel && len(sub.kids) == 2 && sub.rels[0] == "=" && sub.kids[0].op == opSym {
				v, lo = sub.kids[0], sub.kids[1]
			} else {
				return p.fail("unsupported \\" + name + " bounds")
			}
			continue
		}
		if p.isOp("^") && hi == nil {
			p.next()
			hi = p.parseExponent()
			continue
		}
		break
	}
	if v == nil || hi == nil {
		return p.fail("unsupported \\" + name)
	}
	body := p.parseTerm()
	return &node{op: opSum, name: name, kids: []*node{v, lo, hi, body}}
}

var matrixEnvs = map[string]bool{
	"pmatrix": true, "bmatrix": true, "Bmatrix": true, "vmatrix": true, "Vmatrix": true,
	"matrix": true, "smallmatrix": true, "array": true,
}

func (p *parser) environment() *node {
	env := p.next().text
	if !matrixEnvs[env] {
		// align, cases, gather: rows are list items.
		p.inMatrix++
		var items []*node
		for p.err == nil && !p.isCmd("end") && p.peek().kind != tEOF {
			if p.peek().kind == tRowSep || p.isOp("&") || p.isOp(",") || p.isOp(";") {
				p.next()
				continue
			}
			start := p.i
			items = append(items, p.parseRel())
			if p.i == start {
				p.fail("unexpected " + describe(p.peek()))
			}
		}
		p.inMatrix--
		if !p.isCmd("end") {
			return p.fail("missing \\end{" + env + "}")
		}
		p.next()
		p.next() // env name
		if len(items) == 1 {
			return items[0]
		}
		return &node{op: opList, kids: items}
	}
	p.inMatrix++
	defer func() { p.inMatrix-- }()
	var rows [][]*node
	var row []*node
	for p.err == nil {
		if p.isCmd("end") {
			p.next()
			p.next()
			if len(row) > 0 {
				rows = append(rows, row)
			}
			break
		}
		if p.peek().kind == tEOF {
			return p.fail("missing \\end{" + env + "}")
		}
		if p.peek().kind == tRowSep {
			p.next()
			if len(row) > 0 {
				rows = append(rows, row)
			}
			row = nil
			continue
		}
		if p.isOp("&") {
			p.next()
			if len(row) == 0 {
				row = append(row, p.fail("empty matrix cell"))
			}
			continue
		}
		start := p.i
		row = append(row, p.parseRel())
		if p.i == start {
			return p.fail("unexpected " + describe(p.peek()))
		}
		if len(row)*(len(rows)+1) > maxElems {
			return p.failLimit(errTooMany)
		}
	}
	if p.err != nil || len(rows) == 0 {
		return p.fail("empty matrix")
	}
	cols := len(rows[0])
	m := &node{op: opMatrix, rows: len(rows), cols: cols}
	for _, r := range rows {
		if len(r) != cols {
			return p.fail("ragged matrix")
		}
		m.kids = append(m.kids, r...)
	}
	if env == "vmatrix" {
		return &node{op: opFunc, name: "det", kids: []*node{m}}
	}
	return m
}

func isOrdinal(w string) bool {
	switch w {
	case "th", "st", "nd", "rd":
		return true
	}
	return false
}

// ordinalSuffix consumes an ordinal exponent (^{th}, ^\text{th}, ^{\mathrm{nd}})
// after '^' and reports whether there was one.
func (p *parser) ordinalSuffix() bool {
	t := p.peek()
	if t.kind == tWord && isOrdinal(t.text) {
		p.next()
		return true
	}
	if t.kind == tOp && t.text == "{" {
		a, b := p.peekAt(1), p.peekAt(2)
		if a.kind == tWord && isOrdinal(a.text) && b.kind == tOp && b.text == "}" {
			p.next()
			p.next()
			p.next()
			return true
		}
	}
	return false
}

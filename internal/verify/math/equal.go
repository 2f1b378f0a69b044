package math

import (
	stdmath "math"
	"math/big"
	"math/cmplx"
	"sort"
	"strings"
)

const (
	// relTolExact is the relative tolerance between two values that are
	// both written exactly (√2+√3 vs √(5+2√6)): float64 rounding only.
	relTolExact = 1e-9
	// relTolDecimal is the relative tolerance between a decimal literal and
	// an exact value (0.0833333 vs 1/12): about seven significant digits.
	relTolDecimal = 5e-7
	// relTolPoints is the relative tolerance at random points for
	// expressions with variables.
	relTolPoints = 1e-8
	// absFloor is the absolute tolerance under which two floats are equal
	// when neither is exactly representable (cancellation noise near 0).
	absFloor = 1e-12
	// evalBudget caps node evaluations per verdict.
	evalBudget = 400000
)

// judge compares two parsed answers. rounding > 0 replaces the default
// numeric policy by "equal after rounding to that many decimals".
type judge struct {
	rounding int
	budget   int
	// limit is the first cap that cut a comparison short (see limits.go):
	// a "differs" verdict reached after one is reported as unparseable.
	limit *limitError
}

// hit records that a cap cut the comparison short.
func (j *judge) hit(e *limitError) {
	if j.limit == nil {
		j.limit = e
	}
}

func newJudge(rounding int) *judge { return &judge{rounding: rounding, budget: evalBudget} }

func (j *judge) spend(n int) bool {
	j.budget -= n
	if j.budget <= 0 {
		j.hit(errWorkBudget)
		return false
	}
	return true
}

// normalize collapses relation chains to the answer they state:
// "x = 5+5+1 = 11" -> "x = 11", "1 = a = 0" -> "0", "a = 1/3 ≈ 0.33" ->
// "a = 1/3", "... ⇒ x = 3" -> "x = 3".
func normalize(n *node) *node {
	if n == nil || n.op != opRel {
		return n
	}
	kids, rels := n.kids, n.rels
	// Keep what follows the last implication.
	for i := len(rels) - 1; i >= 0; i-- {
		if rels[i] == "=>" {
			kids, rels = kids[i+1:], rels[i+1:]
			break
		}
	}
	// Drop approximation tails: "= 1/3 ≈ 0.33" states 1/3.
	for len(rels) > 1 && rels[len(rels)-1] == "≈" {
		kids, rels = kids[:len(kids)-1], rels[:len(rels)-1]
	}
	if len(rels) == 0 {
		return kids[0]
	}
	if len(rels) == 1 && rels[0] == "≈" {
		// "√2/2 ≈ 0.707" is the exact value and its approximation: the
		// answer is the exact value. "t ≈ 4.5" names a value given only
		// approximately: the answer is that approximation.
		if !hasNames(kids[0]) {
			return kids[0]
		}
		if isLabel(kids[0]) {
			return &node{op: opRel, kids: []*node{kids[0], {op: opApprox, kids: []*node{kids[1]}}}, rels: []string{"="}}
		}
		rels = []string{"="}
	}
	allEq := true
	for _, r := range rels {
		if r != "=" {
			allEq = false
		}
	}
	if allEq && len(kids) >= 3 {
		last := kids[len(kids)-1]
		if isLabel(kids[0]) {
			return &node{op: opRel, kids: []*node{kids[0], last}, rels: []string{"="}}
		}
		return last
	}
	if len(kids) == len(n.kids) {
		return n
	}
	return &node{op: opRel, kids: kids, rels: rels}
}

// isLabel reports whether n names the quantity an equation states ("x",
// "a_3", "f(x)", "AB", "|AB|", "(p,q)", "V_1:V_2") rather than being an
// expression to solve.
func isLabel(n *node) bool {
	switch n.op {
	case opSym:
		return true
	case opSub:
		return n.kids[0].op == opSym || n.kids[0].op == opConst
	case opMul:
		if n.kids[0].op != opSym {
			return false
		}
		for _, k := range n.kids {
			switch k.op {
			case opSym, opSub, opConst:
			case opNum:
				if !k.lit {
					return false
				}
			default:
				return false
			}
		}
		return true
	case opAbs:
		return isLabel(n.kids[0])
	case opRatio, opDiv:
		// AE/EC, \frac{NO}{BO}, V_1 : V_2
		return isLabel(n.kids[0]) && isLabel(n.kids[1])
	case opTuple:
		if len(n.kids) == 0 {
			return false
		}
		for _, k := range n.kids {
			if !isLabel(k) {
				return false
			}
		}
		return true
	}
	return false
}

// labelHead is the name used to match labels: the full label, except that
// f(x) and f(t) (a one-letter function applied to arguments) share "f(·)".
func labelHead(n *node) string {
	if n.op == opMul && len(n.kids) >= 2 && n.kids[0].op == opSym && len(n.kids[0].name) == 1 {
		return n.kids[0].name + "(·)"
	}
	return n.String()
}

// relValue returns the value an equation states: the right side of
// "label = value", or of a purely numeric "100 - 30 = 70".
func relValue(n *node) *node {
	if n.op != opRel || len(n.kids) != 2 {
		return nil
	}
	switch n.rels[0] {
	case "=", "in":
		if isLabel(n.kids[0]) {
			return n.kids[1]
		}
		if n.rels[0] == "=" && !hasNames(n.kids[0]) && !hasNames(n.kids[1]) {
			return n.kids[1]
		}
	}
	return nil
}

func hasNames(n *node) bool {
	m := map[string]bool{}
	freeNames(n, nil, m, 0)
	return len(m) > 0
}

func (j *judge) equal(g, p *node, depth int) bool {
	if g == nil || p == nil || !j.spend(1) {
		return false
	}
	if depth > maxCompareDepth {
		j.hit(errCompareDepth)
		return false
	}
	// "√2/2 ≈ 0.707": the exact value, or the approximation it states.
	if a, d, ok := exactWithApprox(g); ok {
		return j.equal(a, p, depth+1) || j.equal(&node{op: opApprox, kids: []*node{d}}, p, depth+1)
	}
	if a, d, ok := exactWithApprox(p); ok {
		return j.equal(g, a, depth+1) || j.equal(g, &node{op: opApprox, kids: []*node{d}}, depth+1)
	}
	g, p = normalize(g), normalize(p)
	// "a=1, b=3; a=2, b=5" is the set of pairs {(1,3), (2,5)}.
	if t, groups, ok := assignments(g); ok && (groups > 1 || hasTuples(p)) {
		if pt, _, ok := assignments(p); ok {
			p = pt
		}
		g = t
	} else if t, groups, ok := assignments(p); ok && (groups > 1 || hasTuples(g)) {
		p = t
	}
	if g.op == opApprox || p.op == opApprox {
		return j.approxEqual(g, p, depth)
	}
	if g.op == opText || p.op == opText {
		return g.op == p.op && g.name == p.name
	}
	if g.op == opRel && p.op == opRel {
		return j.relEqual(g, p, depth)
	}
	if g.op == opRel || p.op == opRel {
		rel, other := g, p
		relIsGold := true
		if p.op == opRel {
			rel, other = p, g
			relIsGold = false
		}
		if v := relValue(rel); v != nil {
			if relIsGold {
				return j.equal(v, other, depth+1)
			}
			return j.equal(other, v, depth+1)
		}
		if s := relAsSet(rel); s != nil && isSetLike(other) {
			if relIsGold {
				return j.equal(s, other, depth+1)
			}
			return j.equal(other, s, depth+1)
		}
		return false
	}
	if isCollection(g) || isCollection(p) || hasPM(g) || hasPM(p) {
		return j.collEqual(g, p, depth)
	}
	return j.scalarEqual(g, p)
}

func isCollection(n *node) bool {
	switch n.op {
	case opList, opSet, opTuple, opUnion, opMatrix:
		return true
	}
	return matrixOf(n) != nil
}

func isSetLike(n *node) bool {
	switch n.op {
	case opTuple:
		return len(n.kids) == 2
	case opUnion, opSet:
		return true
	}
	return false
}

func hasPM(n *node) bool {
	if n == nil {
		return false
	}
	if n.op == opPM {
		return true
	}
	if n.op == opList || n.op == opSet || n.op == opTuple || n.op == opMatrix || n.op == opRel {
		return false
	}
	for _, k := range n.kids {
		if hasPM(k) {
			return true
		}
	}
	return false
}

// expandPM returns the sign readings of an expression with ± (each ±
// independently), at most maxVariants.
func expandPM(n *node) []*node {
	if n == nil || !hasPM(n) {
		return []*node{n}
	}
	if n.op == opPM {
		var out []*node
		for _, a := range expandPM(n.kids[0]) {
			for _, b := range expandPM(n.kids[1]) {
				out = append(out,
					&node{op: opAdd, kids: []*node{a, b}},
					&node{op: opAdd, kids: []*node{a, {op: opNeg, kids: []*node{b}}}})
				if len(out) >= maxVariants {
					return out
				}
			}
		}
		return out
	}
	out := []*node{{op: n.op, name: n.name, num: n.num}}
	for i, k := range n.kids {
		ks := expandPM(k)
		var next []*node
		for _, o := range out {
			for _, kv := range ks {
				c := *o
				c.kids = append(append([]*node(nil), o.kids[:i]...), kv)
				next = append(next, &c)
				if len(next) >= maxVariants {
					break
				}
			}
		}
		out = next
	}
	for _, o := range out {
		if len(o.kids) != len(n.kids) {
			return []*node{n}
		}
	}
	return out
}

// elements views a node as a collection: its elements and whether their
// order matters. A scalar is a one-element ordered collection; a scalar
// with ± is the unordered set of its sign readings.
func elements(n *node) (elems []*node, ordered bool) {
	switch n.op {
	case opList:
		var out []*node
		for _, k := range n.kids {
			if hasPM(k) {
				out = append(out, expandPM(k)...)
			} else {
				out = append(out, k)
			}
		}
		return out, false
	case opSet:
		var out []*node
		for _, k := range n.kids {
			if hasPM(k) {
				out = append(out, expandPM(k)...)
			} else {
				out = append(out, k)
			}
		}
		return out, false
	case opTuple:
		return n.kids, true
	}
	if hasPM(n) {
		return expandPM(n), false
	}
	return []*node{n}, true
}

func (j *judge) collEqual(g, p *node, depth int) bool {
	if tooManyPM(g) || tooManyPM(p) {
		j.hit(errVariants)
		return false
	}
	// Matrices, including sums and products of matrices.
	gm, pm := matrixOf(g), matrixOf(p)
	if gm != nil || pm != nil {
		if gm != nil && pm != nil {
			if gm.rows != pm.rows || gm.cols != pm.cols {
				return false
			}
			return j.seqEqual(gm.kids, pm.kids, depth)
		}
		// A column or row vector against a tuple.
		m, t := gm, p
		if m == nil {
			m, t = pm, g
		}
		if t.op == opTuple && (t.left == '(' || t.left == '<' || t.left == '[') && (m.rows == 1 || m.cols == 1) && len(t.kids) == len(m.kids) {
			if gm != nil {
				return j.seqEqual(m.kids, t.kids, depth)
			}
			return j.seqEqual(t.kids, m.kids, depth)
		}
		return false
	}
	if g.op == opUnion || p.op == opUnion {
		if g.op != opUnion || p.op != opUnion || g.name != p.name {
			return false
		}
		return j.setEqual(g.kids, p.kids, depth)
	}
	// Two-integer list with a decimal-comma reading ("1,22" = 1.22).
	if g.op == opList && g.alt != nil && !isCollection(p) {
		return j.scalarEqual(numNode(g.alt, true), p)
	}
	if p.op == opList && p.alt != nil && !isCollection(g) {
		return j.scalarEqual(g, numNode(p.alt, true))
	}
	if g.op == opTuple && p.op == opTuple {
		if len(g.kids) != len(p.kids) {
			return false
		}
		if len(g.kids) == 2 && (g.left != p.left || g.right != p.right) {
			return false // intervals: open and closed ends differ
		}
		if g.left == '(' && g.right == ']' || g.left == '[' && g.right == ')' {
			if g.left != p.left || g.right != p.right {
				return false
			}
		}
		return j.seqEqual(g.kids, p.kids, depth)
	}
	if g.op == opSet && p.op == opTuple || g.op == opTuple && p.op == opSet {
		return false
	}
	// Lists with labelled equations: match by label when both sides name
	// every element with distinct labels; otherwise compare the values.
	if g.op == opList || p.op == opList {
		if eq, decided := j.labelledEqual(g, p, depth); decided {
			return eq
		}
		g, p = stripLabels(g), stripLabels(p)
	}
	ge, gOrd := elements(g)
	pe, pOrd := elements(p)
	if g.op == opTuple || p.op == opTuple {
		// A bare list against a tuple keeps its order: "1,3" is (1,3).
		t := g
		if p.op == opTuple {
			t = p
		}
		if t.left != '(' && t.left != '<' {
			return false
		}
		return j.seqEqual(ge, pe, depth)
	}
	if gOrd && pOrd {
		return j.seqEqual(ge, pe, depth)
	}
	return j.setEqual(ge, pe, depth)
}

func stripLabels(n *node) *node {
	if n.op != opList {
		if n.op == opRel {
			if v := relValue(normalize(n)); v != nil {
				return v
			}
		}
		return n
	}
	out := &node{op: opList, alt: n.alt}
	for _, k := range n.kids {
		k = normalize(k)
		if k.op == opRel {
			if v := relValue(k); v != nil {
				k = v
			}
		}
		out.kids = append(out.kids, k)
	}
	return out
}

func labelled(n *node) (labels []string, vals []*node, ok bool) {
	kids := []*node{n}
	if n.op == opList {
		kids = n.kids
	}
	seen := map[string]bool{}
	for _, k := range kids {
		k = normalize(k)
		if k.op != opRel || len(k.kids) != 2 || k.rels[0] != "=" || !isLabel(k.kids[0]) {
			return nil, nil, false
		}
		l := k.kids[0].String()
		if seen[l] {
			return nil, nil, false
		}
		seen[l] = true
		labels = append(labels, l)
		vals = append(vals, k.kids[1])
	}
	return labels, vals, len(labels) > 1
}

func (j *judge) labelledEqual(g, p *node, depth int) (eq, decided bool) {
	gl, gv, ok1 := labelled(g)
	pl, pv, ok2 := labelled(p)
	if !ok1 || !ok2 || len(gl) != len(pl) {
		return false, false
	}
	for i, l := range gl {
		found := false
		for k, m := range pl {
			if m == l {
				if !j.equal(gv[i], pv[k], depth+1) {
					return false, true
				}
				found = true
				break
			}
		}
		if !found {
			return false, false
		}
	}
	return true, true
}

func (j *judge) seqEqual(a, b []*node, depth int) bool {
	if len(a) != len(b) || len(a) > maxElems {
		return false
	}
	for i := range a {
		if !j.equal(a[i], b[i], depth+1) {
			return false
		}
	}
	return true
}

// setEqual reports whether every element of a equals some element of b
// and vice versa (order and repeats ignored: a list answer is the set of
// its values).
func (j *judge) setEqual(a, b []*node, depth int) bool {
	if len(a) > maxElems || len(b) > maxElems || len(a) == 0 != (len(b) == 0) {
		return false
	}
	matchedB := make([]bool, len(b))
	for _, x := range a {
		found := false
		for k, y := range b {
			if j.equal(x, y, depth+1) {
				matchedB[k] = true
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	for k, y := range b {
		if matchedB[k] {
			continue
		}
		found := false
		for _, x := range a {
			if j.equal(x, y, depth+1) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// matrixOf returns n as a matrix when it is one, or a sum, difference,
// scalar multiple, quotient by a scalar, product, power, inverse or
// transpose of matrices (element nodes are built symbolically and evaluated
// later).
func matrixOf(n *node) *node {
	switch n.op {
	case opMatrix:
		return n
	case opDiv:
		if m := matrixOf(n.kids[0]); m != nil && !isCollection(n.kids[1]) {
			out := &node{op: opMatrix, rows: m.rows, cols: m.cols}
			for _, e := range m.kids {
				out.kids = append(out.kids, &node{op: opDiv, kids: []*node{e, n.kids[1]}})
			}
			return out
		}
	case opPow:
		m := matrixOf(n.kids[0])
		if m == nil {
			return nil
		}
		e := n.kids[1]
		if e.op == opSym && (e.name == "T" || e.name == `\top` || e.name == `\intercal`) {
			out := &node{op: opMatrix, rows: m.cols, cols: m.rows}
			for c := 0; c < m.cols; c++ {
				for r := 0; r < m.rows; r++ {
					out.kids = append(out.kids, m.kids[r*m.cols+c])
				}
			}
			return out
		}
		k, ok := exact(e)
		if !ok || !k.IsInt() || !k.Num().IsInt64() || m.rows != m.cols {
			return nil
		}
		p := k.Num().Int64()
		if p < 0 {
			m = matInverse(m)
			if m == nil {
				return nil
			}
			p = -p
		}
		if p == 0 || p > 6 {
			return nil
		}
		acc := m
		for i := int64(1); i < p; i++ {
			acc = matMul(acc, m)
		}
		return acc
	case opNeg:
		if m := matrixOf(n.kids[0]); m != nil {
			out := &node{op: opMatrix, rows: m.rows, cols: m.cols}
			for _, e := range m.kids {
				out.kids = append(out.kids, &node{op: opNeg, kids: []*node{e}})
			}
			return out
		}
	case opAdd:
		var acc *node
		for _, k := range n.kids {
			m := matrixOf(k)
			if m == nil {
				return nil
			}
			if acc == nil {
				acc = m
				continue
			}
			if acc.rows != m.rows || acc.cols != m.cols {
				return nil
			}
			sum := &node{op: opMatrix, rows: m.rows, cols: m.cols}
			for i := range m.kids {
				sum.kids = append(sum.kids, &node{op: opAdd, kids: []*node{acc.kids[i], m.kids[i]}})
			}
			acc = sum
		}
		return acc
	case opMul:
		var acc *node
		var scalars []*node
		for _, k := range n.kids {
			m := matrixOf(k)
			if m == nil {
				if isCollection(k) {
					return nil
				}
				scalars = append(scalars, k)
				continue
			}
			if acc == nil {
				acc = m
				continue
			}
			acc = matMul(acc, m)
			if acc == nil {
				return nil
			}
		}
		if acc == nil {
			return nil
		}
		if len(scalars) > 0 {
			out := &node{op: opMatrix, rows: acc.rows, cols: acc.cols}
			for _, e := range acc.kids {
				out.kids = append(out.kids, &node{op: opMul, kids: append(append([]*node(nil), scalars...), e)})
			}
			acc = out
		}
		return acc
	}
	return nil
}

// assignments reads a list of label = value equations as the solutions it
// lists: "a=1, b=3" is the tuple (1,3) and "a=1,b=3; a=2,b=5" the set
// {(1,3),(2,5)}, the values ordered by label (x before y, a_2 before a_10).
// groups is the number of solutions.
func assignments(n *node) (*node, int, bool) {
	kids := []*node{n}
	if n.op == opList {
		kids = n.kids
	}
	var labels []string
	var vals []*node
	for _, k := range kids {
		k = normalize(k)
		if k.op != opRel || len(k.kids) != 2 || k.rels[0] != "=" || !isLabel(k.kids[0]) || hasNames(k.kids[1]) {
			return nil, 0, false
		}
		labels = append(labels, k.kids[0].String())
		vals = append(vals, k.kids[1])
	}
	period := len(labels)
	for i := 1; i < len(labels); i++ {
		if labels[i] == labels[0] {
			period = i
			break
		}
	}
	if period < 2 || len(labels)%period != 0 {
		return nil, 0, false
	}
	order := append([]string(nil), labels[:period]...)
	sort.Slice(order, func(a, b int) bool { return naturalLess(order[a], order[b]) })
	for i := 1; i < len(order); i++ {
		if order[i] == order[i-1] {
			return nil, 0, false
		}
	}
	var tuples []*node
	for g := 0; g < len(labels); g += period {
		t := &node{op: opTuple, left: '(', right: ')'}
		for _, l := range order {
			found := false
			for k := g; k < g+period; k++ {
				if labels[k] == l {
					t.kids = append(t.kids, vals[k])
					found = true
					break
				}
			}
			if !found {
				return nil, 0, false
			}
		}
		tuples = append(tuples, t)
	}
	if len(tuples) == 1 {
		return tuples[0], 1, true
	}
	return &node{op: opSet, kids: tuples}, len(tuples), true
}

// hasTuples reports whether n is a tuple or a collection of tuples.
func hasTuples(n *node) bool {
	if n.op == opTuple {
		return true
	}
	if n.op == opList || n.op == opSet {
		for _, k := range n.kids {
			if k.op == opTuple {
				return true
			}
		}
	}
	return false
}

// naturalLess orders names with numbers by value: a_2 before a_10.
func naturalLess(a, b string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			ei, ej := i, j
			for ei < len(a) && isDigit(a[ei]) {
				ei++
			}
			for ej < len(b) && isDigit(b[ej]) {
				ej++
			}
			x, y := strings.TrimLeft(a[i:ei], "0"), strings.TrimLeft(b[j:ej], "0")
			if len(x) != len(y) {
				return len(x) < len(y)
			}
			if x != y {
				return x < y
			}
			i, j = ei, ej
			continue
		}
		if a[i] != b[j] {
			return a[i] < b[j]
		}
		i++
		j++
	}
	return len(a)-i < len(b)-j
}

// exactWithApprox splits "A ≈ D" where A is a constant expression.
func exactWithApprox(n *node) (a, d *node, ok bool) {
	if n.op != opRel || len(n.kids) != 2 || n.rels[0] != "≈" || hasNames(n.kids[0]) {
		return nil, nil, false
	}
	return n.kids[0], n.kids[1], true
}

// approxEqual compares a value marked approximate ("≈ 0.707", "t ≈ 4.5")
// with the other answer. They are equal when the other value is the shown
// number exactly, or when the shown number has at least three significant
// digits and is the other value rounded to the decimals shown (√2/2 ≈
// 0.707, 7/π ≈ 2.23). Two approximations compare their shown values.
func (j *judge) approxEqual(g, p *node, depth int) bool {
	a, other := g, p
	if a.op != opApprox {
		a, other = p, g
	}
	shown := a.kids[0]
	if other.op == opApprox {
		return j.equal(shown, other.kids[0], depth+1)
	}
	if isCollection(other) || other.op == opRel || other.op == opText {
		return false
	}
	if j.equal(shown, other, depth+1) {
		return true
	}
	lit := shown
	neg := false
	if lit.op == opNeg {
		lit, neg = lit.kids[0], true
	}
	if lit.op != opNum || lit.places < 0 || lit.sig < 3 {
		return false
	}
	want := new(big.Rat).Set(lit.num)
	if neg {
		want.Neg(want)
	}
	var x float64
	if r, ok := exact(other); ok {
		x, _ = r.Float64()
	} else {
		names := map[string]bool{}
		freeNames(other, nil, names, 0)
		if len(names) > 0 {
			return false
		}
		pt := point{seed: 1, budget: j.budget}
		v, err := evalC(other, &pt)
		j.budget = pt.budget
		if err != nil || !isReal(v) {
			j.evalFailed(err, other)
			return false
		}
		x = real(v)
	}
	w, _ := want.Float64()
	half := 0.5 * stdmath.Pow(10, -float64(lit.places))
	return stdmath.Abs(x-w) <= half*(1+1e-9)
}

// matMul returns the product of two matrices, nil when the shapes do not
// fit or the result is too large.
func matMul(a, b *node) *node {
	if a.cols != b.rows || a.rows*b.cols > maxElems {
		return nil
	}
	prod := &node{op: opMatrix, rows: a.rows, cols: b.cols}
	for r := 0; r < a.rows; r++ {
		for c := 0; c < b.cols; c++ {
			s := &node{op: opAdd}
			for k := 0; k < a.cols; k++ {
				s.kids = append(s.kids, &node{op: opMul, kids: []*node{a.kids[r*a.cols+k], b.kids[k*b.cols+c]}})
			}
			prod.kids = append(prod.kids, s)
		}
	}
	return prod
}

// detNode returns the determinant of a square matrix of size at most 4 as
// an expression (Laplace expansion along the first row), or nil.
func detNode(m *node) *node {
	if m == nil || m.rows != m.cols || m.rows > 4 || m.rows == 0 {
		return nil
	}
	n := m.rows
	if n == 1 {
		return m.kids[0]
	}
	sum := &node{op: opAdd}
	for c := 0; c < n; c++ {
		term := &node{op: opMul, kids: []*node{m.kids[c], detNode(minor(m, 0, c))}}
		if c%2 == 1 {
			term = &node{op: opNeg, kids: []*node{term}}
		}
		sum.kids = append(sum.kids, term)
	}
	return sum
}

// minor is m without row r and column c.
func minor(m *node, r, c int) *node {
	out := &node{op: opMatrix, rows: m.rows - 1, cols: m.cols - 1}
	for i := 0; i < m.rows; i++ {
		for j := 0; j < m.cols; j++ {
			if i != r && j != c {
				out.kids = append(out.kids, m.kids[i*m.cols+j])
			}
		}
	}
	return out
}

// matInverse returns the inverse of a square matrix (size at most 4) as
// the adjugate over the determinant, or nil.
func matInverse(m *node) *node {
	det := detNode(m)
	if det == nil {
		return nil
	}
	n := m.rows
	if n == 1 {
		return &node{op: opMatrix, rows: 1, cols: 1, kids: []*node{{op: opDiv, kids: []*node{intNode(1), det}}}}
	}
	out := &node{op: opMatrix, rows: n, cols: n}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var cof *node = detNode(minor(m, j, i))
			if (i+j)%2 == 1 {
				cof = &node{op: opNeg, kids: []*node{cof}}
			}
			out.kids = append(out.kids, &node{op: opDiv, kids: []*node{cof, det}})
		}
	}
	return out
}

// variants are the readings of a scalar answer with a unit marker: "50%"
// is 50 or 0.5; "45°" is 45 or π/4.
//
// Degrees inside an expression ("180^\circ - 2\alpha") are read both as
// plain numbers of degrees and converted to radians.
func variants(n *node) []*node {
	switch n.op {
	case opPercent, opDegree:
		return []*node{n.kids[0], n}
	}
	if hasDegree(n, 0) {
		return []*node{stripDegrees(n, 0), n}
	}
	return []*node{n}
}

func hasDegree(n *node, depth int) bool {
	if n == nil || depth > maxDepth*4 {
		return false
	}
	if n.op == opDegree {
		return true
	}
	for _, k := range n.kids {
		if hasDegree(k, depth+1) {
			return true
		}
	}
	return false
}

// stripDegrees copies n with every degree sign dropped.
func stripDegrees(n *node, depth int) *node {
	if n == nil || depth > maxDepth*4 {
		return n
	}
	if n.op == opDegree {
		return stripDegrees(n.kids[0], depth+1)
	}
	c := *n
	c.kids = make([]*node, len(n.kids))
	for i, k := range n.kids {
		c.kids[i] = stripDegrees(k, depth+1)
	}
	return &c
}

func (j *judge) scalarEqual(g, p *node) bool {
	for _, a := range variants(g) {
		for _, b := range variants(p) {
			if j.valueEqual(a, b) {
				return true
			}
		}
	}
	return false
}

func (j *judge) valueEqual(a, b *node) bool {
	if !j.spend(10) {
		return false
	}
	if a.op == opEllipsis || b.op == opEllipsis {
		return a.op == b.op
	}
	ra, oka := exact(a)
	rb, okb := exact(b)
	if oka && okb {
		if ra.Cmp(rb) == 0 {
			return true
		}
		if j.rounding > 0 {
			return roundedEqual(ra, rb, j.rounding)
		}
		if hasDecimal(a) != hasDecimal(b) {
			return enoughDigits(a, b) && ratClose(ra, rb, relTolDecimal)
		}
		return false
	}
	names := map[string]bool{}
	freeNames(a, nil, names, 0)
	freeNames(b, nil, names, 0)
	tol := relTolExact
	if hasDecimal(a) || hasDecimal(b) {
		if !enoughDigits(a, b) {
			return false
		}
		tol = relTolDecimal
	}
	if len(names) == 0 {
		pt := point{seed: 1, budget: j.budget}
		x, e1 := evalC(a, &pt)
		y, e2 := evalC(b, &pt)
		j.budget = pt.budget
		if e1 != nil || e2 != nil {
			j.evalFailed(e1, a)
			j.evalFailed(e2, b)
			return false
		}
		if j.rounding > 0 && isReal(x) && isReal(y) {
			return roundFloat(real(x), j.rounding) == roundFloat(real(y), j.rounding)
		}
		return closeEnough(x, y, tol)
	}
	if tol < relTolPoints {
		tol = relTolPoints
	}
	return j.pointsEqual(a, b, tol)
}

// evalFailed records the cap behind an evaluation error, if any: a value
// too large for exact arithmetic and for float64, a sum too long, the
// work budget. Domain errors (1/0, √-1 at a point) are not caps.
func (j *judge) evalFailed(err error, n *node) {
	switch err {
	case errBudget:
		j.hit(errWorkBudget)
	case errSumTerms:
		j.hit(errSumTooLong)
	case errInfinte:
		if !hasInfinity(n) {
			j.hit(errValueTooBig)
		}
	}
}

func hasInfinity(n *node) bool {
	if n == nil {
		return false
	}
	if n.op == opConst && n.name == "inf" {
		return true
	}
	for _, k := range n.kids {
		if hasInfinity(k) {
			return true
		}
	}
	return false
}

// pmCount counts the ± signs of an element (each doubles its readings).
func pmCount(n *node) int {
	if n == nil || n.op == opList || n.op == opSet || n.op == opTuple || n.op == opMatrix || n.op == opRel {
		return 0
	}
	c := 0
	if n.op == opPM {
		c = 1
	}
	for _, k := range n.kids {
		c += pmCount(k)
	}
	return c
}

// tooManyPM reports whether expanding the ± signs of n (or of one of its
// elements) would exceed maxVariants readings.
func tooManyPM(n *node) bool {
	kids := []*node{n}
	if n.op == opList || n.op == opSet {
		kids = n.kids
	}
	for _, k := range kids {
		if c := pmCount(k); c > 0 && 1<<min(c, 30) > maxVariants {
			return true
		}
	}
	return false
}

// minDecimalDigits is the number of significant digits a bare decimal
// needs to stand for an exact value it is not exactly equal to: 0.0833333
// (6 digits) is a rounding of 1/12, 0.08333333 (7) is accepted.
const minDecimalDigits = 7

// enoughDigits reports whether a bare decimal answer (on either side) shows
// at least minDecimalDigits significant digits. A decimal inside a larger
// expression (2.5π) is exact and not limited.
func enoughDigits(a, b *node) bool {
	for _, n := range []*node{a, b} {
		if n.op == opNeg {
			n = n.kids[0]
		}
		if n.op == opNum && n.dec && n.places >= 0 && n.sig < minDecimalDigits {
			return false
		}
	}
	return true
}

// pointsEqual evaluates both sides at deterministic pseudo-random points.
// Points where both sides are undefined are skipped; one side undefined
// is a difference. Sums with symbolic bounds switch to integer points.
func (j *judge) pointsEqual(a, b *node, tol float64) bool {
	integers := false
	agreed := 0
	for k := 0; k < 8 && agreed < 4; k++ {
		pt := point{seed: uint64(k+1) * 7919, integers: integers, budget: j.budget}
		x, e1 := evalC(a, &pt)
		y, e2 := evalC(b, &pt)
		j.budget = pt.budget
		if j.budget <= 0 {
			j.hit(errWorkBudget)
			return false
		}
		j.evalFailed(e1, a)
		j.evalFailed(e2, b)
		if (e1 == errBound || e2 == errBound) && !integers {
			integers = true
			agreed = 0
			k = -1
			continue
		}
		if e1 != nil && e2 != nil {
			continue
		}
		if e1 != nil || e2 != nil {
			return false
		}
		if !closeEnough(x, y, tol) {
			return false
		}
		agreed++
	}
	return agreed >= 2
}

func closeEnough(x, y complex128, rel float64) bool {
	if cmplx.IsInf(x) || cmplx.IsInf(y) {
		return x == y
	}
	d := cmplx.Abs(x - y)
	scale := stdmath.Max(cmplx.Abs(x), cmplx.Abs(y))
	return d <= rel*scale || d <= absFloor
}

// ratClose reports |a-b| <= rel*max(|a|,|b|), exactly.
func ratClose(a, b *big.Rat, rel float64) bool {
	d := new(big.Rat).Sub(a, b)
	d.Abs(d)
	s := new(big.Rat).Abs(a)
	if t := new(big.Rat).Abs(b); t.Cmp(s) > 0 {
		s = t
	}
	r := new(big.Rat)
	r.SetFloat64(rel)
	s.Mul(s, r)
	return d.Cmp(s) <= 0
}

func roundedEqual(a, b *big.Rat, digits int) bool {
	return roundRat(a, digits) == roundRat(b, digits)
}

func roundRat(a *big.Rat, digits int) string {
	if digits > 30 {
		digits = 30
	}
	return a.FloatString(digits)
}

func roundFloat(x float64, digits int) float64 {
	if digits > 15 {
		digits = 15
	}
	p := stdmath.Pow(10, float64(digits))
	return stdmath.Round(x*p) / p
}

// ---------------------------------------------------------------------------
// Relations.

var flipRel = map[string]string{"<": ">", ">": "<", "<=": ">=", ">=": "<=", "=": "=", "!=": "!="}

func (j *judge) relEqual(g, p *node, depth int) bool {
	if len(g.kids) == 2 && len(p.kids) == 2 {
		gr, pr := g.rels[0], p.rels[0]
		if gr == "=" && pr == "=" {
			if isLabel(g.kids[0]) && isLabel(p.kids[0]) && labelHead(g.kids[0]) == labelHead(p.kids[0]) {
				return j.equal(g.kids[1], p.kids[1], depth+1)
			}
			return j.equationEqual(g, p)
		}
		if gr == "in" && pr == "in" {
			return g.kids[0].String() == p.kids[0].String() && j.equal(g.kids[1], p.kids[1], depth+1)
		}
	}
	gs, gv := relSet(g)
	ps, pv := relSet(p)
	if gs != nil && ps != nil {
		if gv != pv {
			return false
		}
		return j.equal(gs, ps, depth+1)
	}
	if len(g.kids) == 2 && len(p.kids) == 2 {
		if eq, ok := j.inequalityEqual(g, p); ok {
			return eq
		}
	}
	// Chains compared member by member, possibly written in reverse.
	if len(g.kids) != len(p.kids) {
		return false
	}
	same := true
	for i, r := range g.rels {
		if r != p.rels[i] {
			same = false
		}
	}
	if same && j.seqEqual(g.kids, p.kids, depth) {
		return true
	}
	n := len(p.kids)
	for i, r := range g.rels {
		if flipRel[p.rels[n-2-i]] != r {
			return false
		}
	}
	rev := make([]*node, n)
	for i, k := range p.kids {
		rev[n-1-i] = k
	}
	return j.seqEqual(g.kids, rev, depth)
}

// equationEqual: L1 = R1 and L2 = R2 are the same equation when L1-R1 is a
// non-zero constant multiple of L2-R2 (checked at random points).
func (j *judge) equationEqual(g, p *node) bool {
	fg := &node{op: opAdd, kids: []*node{g.kids[0], {op: opNeg, kids: []*node{g.kids[1]}}}}
	fp := &node{op: opAdd, kids: []*node{p.kids[0], {op: opNeg, kids: []*node{p.kids[1]}}}}
	names := map[string]bool{}
	freeNames(fg, nil, names, 0)
	freeNames(fp, nil, names, 0)
	if len(names) == 0 {
		return j.equal(g.kids[1], p.kids[1], 1)
	}
	ratio, ok := j.constantRatio(fg, fp)
	return ok && ratio != 0
}

// constantRatio returns c when a = c*b at every sampled point.
func (j *judge) constantRatio(a, b *node) (complex128, bool) {
	var ratio complex128
	have := false
	agreed := 0
	for k := 0; k < 8 && agreed < 4; k++ {
		pt := point{seed: uint64(k+1) * 104729, budget: j.budget}
		x, e1 := evalC(a, &pt)
		y, e2 := evalC(b, &pt)
		j.budget = pt.budget
		if j.budget <= 0 {
			j.hit(errWorkBudget)
			return 0, false
		}
		j.evalFailed(e1, a)
		j.evalFailed(e2, b)
		if e1 != nil || e2 != nil {
			if e1 != nil && e2 != nil {
				continue
			}
			return 0, false
		}
		if cmplx.Abs(y) < absFloor {
			if cmplx.Abs(x) < absFloor {
				continue
			}
			return 0, false
		}
		r := x / y
		if !have {
			ratio, have = r, true
		} else if !closeEnough(r, ratio, relTolPoints*10) {
			return 0, false
		}
		agreed++
	}
	return ratio, have && agreed >= 2
}

// inequalityEqual compares two-sided inequalities in several variables:
// a < b and c < d agree when b-a is a positive multiple of d-c.
func (j *judge) inequalityEqual(g, p *node) (bool, bool) {
	fg, sg, ok1 := ineqForm(g)
	fp, sp, ok2 := ineqForm(p)
	if !ok1 || !ok2 {
		return false, false
	}
	if sg != sp {
		return false, true
	}
	r, ok := j.constantRatio(fg, fp)
	if !ok {
		return false, true
	}
	if sg == "!=" {
		return r != 0, true
	}
	return isReal(r) && real(r) > 0, true
}

// ineqForm writes "a op b" as "f > 0", "f >= 0" or "f != 0".
func ineqForm(n *node) (*node, string, bool) {
	a, b := n.kids[0], n.kids[1]
	sub := func(x, y *node) *node {
		return &node{op: opAdd, kids: []*node{x, {op: opNeg, kids: []*node{y}}}}
	}
	switch n.rels[0] {
	case "<":
		return sub(b, a), ">", true
	case "<=":
		return sub(b, a), ">=", true
	case ">":
		return sub(a, b), ">", true
	case ">=":
		return sub(a, b), ">=", true
	case "!=":
		return sub(a, b), "!=", true
	}
	return nil, "", false
}

// relVar returns the single variable of a one-variable relation.
func relVar(n *node) string {
	names := map[string]bool{}
	for _, k := range n.kids {
		freeNames(k, nil, names, 0)
	}
	if len(names) != 1 {
		return ""
	}
	for k := range names {
		return k
	}
	return ""
}

// relAsSet turns a one-variable inequality, chain or "x ∈ S" into the set
// it describes (an interval or a union), or returns nil. The bounded
// quantity may be a variable or any label ("-1 ≤ g(t) ≤ 2", "0 < f(x) < 1",
// "0 < AB < 3"); |v| of a variable describes the values of v: "2 ≤ |w| ≤ 3"
// is [-3,-2] ∪ [2,3], "|x| < 1" is (-1,1) (w real).
func relAsSet(n *node) *node {
	s, _ := relSet(n)
	return s
}

// relSet is relAsSet with the subject the set belongs to (the variable or
// label, by its canonical string).
func relSet(n *node) (*node, string) {
	if n.op != opRel {
		return nil, ""
	}
	if len(n.kids) == 2 && n.rels[0] == "in" && (n.kids[0].op == opSym || isLabel(n.kids[0])) {
		return n.kids[1], n.kids[0].String()
	}
	negInf := &node{op: opNeg, kids: []*node{{op: opConst, name: "inf"}}}
	posInf := &node{op: opConst, name: "inf"}
	interval := func(lo, hi *node, lc, hc bool) *node {
		l, r := byte('('), byte(')')
		if lc {
			l = '['
		}
		if hc {
			r = ']'
		}
		return &node{op: opTuple, kids: []*node{lo, hi}, left: l, right: r}
	}
	union := func(a, b *node) *node { return &node{op: opUnion, name: "cup", kids: []*node{a, b}} }
	neg := func(x *node) *node { return &node{op: opNeg, kids: []*node{x}} }
	// subject: a single variable, a label, or |v|.
	subject := func(k *node) (string, bool, bool) {
		if k.op == opAbs && k.kids[0].op == opSym {
			return k.kids[0].name, true, true
		}
		if k.op == opSym {
			return k.name, false, true
		}
		if isLabel(k) && hasNames(k) {
			return k.String(), false, true
		}
		return "", false, false
	}
	switch len(n.kids) {
	case 2:
		a, b := n.kids[0], n.kids[1]
		op := n.rels[0]
		name, abs, ok := subject(a)
		if !ok || hasNames(b) {
			name, abs, ok = subject(b)
			if !ok || hasNames(a) {
				return nil, ""
			}
			a, b = b, a
			op = flipRel[op]
		}
		if abs {
			switch op {
			case "<", "<=":
				return interval(neg(b), b, op == "<=", op == "<="), name
			case ">", ">=":
				if sign(b) <= 0 {
					return nil, ""
				}
				return union(interval(negInf, neg(b), false, op == ">="), interval(b, posInf, op == ">=", false)), name
			}
			return nil, ""
		}
		switch op {
		case "<":
			return interval(negInf, b, false, false), name
		case "<=":
			return interval(negInf, b, false, true), name
		case ">":
			return interval(b, posInf, false, false), name
		case ">=":
			return interval(b, posInf, true, false), name
		case "!=":
			return union(interval(negInf, b, false, false), interval(b, posInf, false, false)), name
		}
	case 3:
		a, x, b := n.kids[0], n.kids[1], n.kids[2]
		name, abs, ok := subject(x)
		if !ok || hasNames(a) || hasNames(b) {
			return nil, ""
		}
		r1, r2 := n.rels[0], n.rels[1]
		lower := func(r string) bool { return r == "<" || r == "<=" }
		upper := func(r string) bool { return r == ">" || r == ">=" }
		if upper(r1) && upper(r2) {
			a, b = b, a
			r1, r2 = flipRel[r2], flipRel[r1]
		}
		if !lower(r1) || !lower(r2) {
			return nil, ""
		}
		if !abs {
			return interval(a, b, r1 == "<=", r2 == "<="), name
		}
		// a ≤ |v| ≤ b
		if sign(a) <= 0 {
			return interval(neg(b), b, r2 == "<=", r2 == "<="), name
		}
		return union(interval(neg(b), neg(a), r2 == "<=", r1 == "<="), interval(a, b, r1 == "<=", r2 == "<=")), name
	}
	return nil, ""
}

// sign is the sign of a constant expression (0 when it cannot be told).
func sign(n *node) int {
	if r, ok := exact(n); ok {
		return r.Sign()
	}
	pt := point{seed: 1, budget: 2000}
	v, err := evalC(n, &pt)
	if err != nil || !isReal(v) {
		return 0
	}
	switch {
	case real(v) > 0:
		return 1
	case real(v) < 0:
		return -1
	}
	return 0
}

// textKey normalises prose for comparison: lower case, without LaTeX text
// wrappers, spaces and punctuation.
func textKey(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			j := i + 1
			for j < len(s) && isLetter(s[j]) {
				j++
			}
			switch s[i+1 : j] {
			case "text", "textbf", "textit", "mathrm", "mbox", "mathbf", "textrm", "emph", "operatorname":
				i = j - 1
				continue
			}
			if j == i+1 && j < len(s) {
				i++ // \, \; \! \{ ...
				continue
			}
		}
		switch c {
		case ' ', '{', '}', '$', '.', ',', ';', ':', '!', '?', '"', '\'', '*', '~', '\n':
			continue
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

package math

import (
	"math/big"
	"strings"
)

type opKind uint8

const (
	opNum      opKind = iota + 1 // num (exact); dec: written as a decimal
	opSym                        // variable; name
	opConst                      // name: "pi", "e", "i", "inf"
	opAdd                        // n-ary sum
	opMul                        // n-ary product
	opNeg                        // -x
	opDiv                        // kids[0] / kids[1]
	opPow                        // kids[0] ^ kids[1]
	opRoot                       // kids[0] radicand, kids[1] index (may be nil: square root)
	opFunc                       // name(kids...)
	opFact                       // kids[0]!
	opAbs                        // |kids[0]|
	opFloor                      // floor
	opCeil                       // ceil
	opBinom                      // binom(kids[0], kids[1])
	opPM                         // kids[0] ± kids[1]
	opPercent                    // kids[0] %
	opDegree                     // kids[0] °
	opSub                        // kids[0]_{kids[1]}: indexed name
	opSum                        // name: "sum"/"prod"; kids: var, lo, hi, body
	opTuple                      // ordered; left/right brackets
	opSet                        // \{...\}
	opList                       // bare list "a, b, c" (and braces {a,b})
	opUnion                      // union of intervals / sets (name "cup"), or "cap"/"setminus"
	opMatrix                     // rows x cols, kids row-major
	opRel                        // chain: kids members, rels[i] between kids[i] and kids[i+1]
	opText                       // name: normalized prose
	opEllipsis                   // \ldots
	opRatio                      // kids[0] : kids[1]
	opApprox                     // kids[0] is a value marked approximate (≈ 1.732)
)

type node struct {
	op    opKind
	kids  []*node
	num   *big.Rat
	name  string
	dec   bool // opNum written with a decimal point or exponent
	fracL bool // opDiv written as \frac of two integer literals
	left  byte // opTuple: '(' '[' '<'
	right byte
	rows  int // opMatrix
	cols  int
	rels  []string
	// alt is the decimal-comma reading of a two-integer list "1,22".
	alt *big.Rat
	// lit is true for a number written without sign or operators.
	lit bool
	// signedLit is true for a literal with a sign ("-4"), not bracketed.
	signedLit bool
	// fromWord marks the product of letters read from a two-letter word.
	fromWord bool
	// places and sig: for a decimal literal without exponent, the digits
	// after the point and the significant digits (0.707: 3 and 3); places
	// is -1 otherwise.
	places, sig int
}

func numNode(r *big.Rat, dec bool) *node { return &node{op: opNum, num: r, dec: dec, lit: true} }

func intNode(v int64) *node { return &node{op: opNum, num: new(big.Rat).SetInt64(v)} }

// String prints a canonical form, used for labels, variable names of
// indexed symbols, and debugging.
func (n *node) String() string {
	var b strings.Builder
	n.write(&b, 0)
	return b.String()
}

func (n *node) write(b *strings.Builder, depth int) {
	if n == nil {
		b.WriteString("∅")
		return
	}
	if depth > maxDepth {
		b.WriteString("…")
		return
	}
	d := depth + 1
	list := func(sep string) {
		for i, k := range n.kids {
			if i > 0 {
				b.WriteString(sep)
			}
			k.write(b, d)
		}
	}
	switch n.op {
	case opNum:
		if n.num.IsInt() {
			b.WriteString(n.num.Num().String())
		} else {
			b.WriteString(n.num.RatString())
		}
	case opSym, opConst:
		b.WriteString(n.name)
	case opText:
		b.WriteString(`"` + n.name + `"`)
	case opEllipsis:
		b.WriteString("...")
	case opAdd:
		b.WriteByte('(')
		list("+")
		b.WriteByte(')')
	case opMul:
		b.WriteByte('(')
		list("*")
		b.WriteByte(')')
	case opNeg:
		b.WriteString("-")
		n.kids[0].write(b, d)
	case opDiv:
		b.WriteByte('(')
		list("/")
		b.WriteByte(')')
	case opPow:
		b.WriteByte('(')
		list("^")
		b.WriteByte(')')
	case opRatio:
		list(":")
	case opApprox:
		b.WriteString("≈")
		list("")
	case opPM:
		b.WriteByte('(')
		list("±")
		b.WriteByte(')')
	case opRoot:
		b.WriteString("root(")
		n.kids[0].write(b, d)
		if n.kids[1] != nil {
			b.WriteByte(',')
			n.kids[1].write(b, d)
		}
		b.WriteByte(')')
	case opFunc, opFact, opAbs, opFloor, opCeil, opBinom, opPercent, opDegree, opSum:
		name := map[opKind]string{opFact: "fact", opAbs: "abs", opFloor: "floor", opCeil: "ceil",
			opBinom: "binom", opPercent: "percent", opDegree: "deg"}[n.op]
		if name == "" {
			name = n.name
		}
		b.WriteString(name + "(")
		list(",")
		b.WriteByte(')')
	case opSub:
		n.kids[0].write(b, d)
		b.WriteString("_{")
		n.kids[1].write(b, d)
		b.WriteByte('}')
	case opTuple:
		b.WriteByte(n.left)
		list(",")
		b.WriteByte(n.right)
	case opSet:
		b.WriteString("{")
		list(",")
		b.WriteString("}")
	case opList:
		b.WriteString("list(")
		list(",")
		b.WriteString(")")
	case opUnion:
		list(" " + n.name + " ")
	case opMatrix:
		b.WriteString("mat[")
		for r := 0; r < n.rows; r++ {
			if r > 0 {
				b.WriteByte(';')
			}
			for c := 0; c < n.cols; c++ {
				if c > 0 {
					b.WriteByte(',')
				}
				n.kids[r*n.cols+c].write(b, d)
			}
		}
		b.WriteByte(']')
	case opRel:
		for i, k := range n.kids {
			if i > 0 {
				b.WriteString(" " + n.rels[i-1] + " ")
			}
			k.write(b, d)
		}
	default:
		b.WriteString("?")
	}
}

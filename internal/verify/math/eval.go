package math

import (
	"errors"
	"hash/fnv"
	stdmath "math"
	"math/big"
	"math/cmplx"
)

// ---------------------------------------------------------------------------
// Exact evaluation over the rationals.

type ratEnv struct {
	name string
	val  *big.Rat
}

// exact evaluates n to a rational when every operation stays rational and
// within maxRatBits; ok is false otherwise (irrational, symbolic, too big).
func exact(n *node) (*big.Rat, bool) {
	budget := 20000
	return exactEnv(n, nil, &budget)
}

func ratSmall(r *big.Rat) bool {
	return r.Num().BitLen() <= maxRatBits && r.Denom().BitLen() <= maxRatBits
}

var (
	ratOne     = big.NewRat(1, 1)
	ratHundred = big.NewRat(100, 1)
)

func exactEnv(n *node, env []ratEnv, budget *int) (*big.Rat, bool) {
	if n == nil {
		return nil, false
	}
	*budget--
	if *budget < 0 {
		return nil, false
	}
	switch n.op {
	case opNum:
		return n.num, true
	case opSym:
		for i := len(env) - 1; i >= 0; i-- {
			if env[i].name == n.name {
				return env[i].val, true
			}
		}
		return nil, false
	case opAdd, opMul:
		acc := new(big.Rat)
		if n.op == opMul {
			acc.SetInt64(1)
		}
		for _, k := range n.kids {
			v, ok := exactEnv(k, env, budget)
			if !ok {
				return nil, false
			}
			if n.op == opAdd {
				acc.Add(acc, v)
			} else {
				acc.Mul(acc, v)
			}
			if !ratSmall(acc) {
				return nil, false
			}
		}
		return acc, true
	case opNeg:
		v, ok := exactEnv(n.kids[0], env, budget)
		if !ok {
			return nil, false
		}
		return new(big.Rat).Neg(v), true
	case opDiv, opRatio:
		a, ok := exactEnv(n.kids[0], env, budget)
		if !ok {
			return nil, false
		}
		b, ok := exactEnv(n.kids[1], env, budget)
		if !ok || b.Sign() == 0 {
			return nil, false
		}
		r := new(big.Rat).Quo(a, b)
		return r, ratSmall(r)
	case opPercent:
		v, ok := exactEnv(n.kids[0], env, budget)
		if !ok {
			return nil, false
		}
		return new(big.Rat).Quo(v, ratHundred), true
	case opPow:
		b, ok := exactEnv(n.kids[0], env, budget)
		if !ok {
			return nil, false
		}
		e, ok := exactEnv(n.kids[1], env, budget)
		if !ok {
			return nil, false
		}
		return ratPow(b, e)
	case opRoot:
		x, ok := exactEnv(n.kids[0], env, budget)
		if !ok {
			return nil, false
		}
		k := int64(2)
		if n.kids[1] != nil {
			idx, ok := exactEnv(n.kids[1], env, budget)
			if !ok || !idx.IsInt() || !idx.Num().IsInt64() {
				return nil, false
			}
			k = idx.Num().Int64()
		}
		if k < 1 || k > 64 {
			return nil, false
		}
		return ratRoot(x, k)
	case opFact:
		v, ok := exactEnv(n.kids[0], env, budget)
		if !ok || !v.IsInt() || v.Sign() < 0 || v.Num().Cmp(big.NewInt(maxFactorial)) > 0 {
			return nil, false
		}
		f := new(big.Int).MulRange(1, v.Num().Int64())
		return new(big.Rat).SetInt(f), true
	case opBinom:
		a, ok1 := exactEnv(n.kids[0], env, budget)
		b, ok2 := exactEnv(n.kids[1], env, budget)
		if !ok1 || !ok2 || !a.IsInt() || !b.IsInt() || !a.Num().IsInt64() || !b.Num().IsInt64() {
			return nil, false
		}
		nn, kk := a.Num().Int64(), b.Num().Int64()
		if nn < 0 || kk < 0 || kk > nn || nn > 100000 || min(kk, nn-kk) > maxFactorial {
			return nil, false
		}
		return new(big.Rat).SetInt(new(big.Int).Binomial(nn, kk)), true
	case opAbs:
		v, ok := exactEnv(n.kids[0], env, budget)
		if !ok {
			return nil, false
		}
		return new(big.Rat).Abs(v), true
	case opFloor, opCeil:
		v, ok := exactEnv(n.kids[0], env, budget)
		if !ok {
			return nil, false
		}
		q := new(big.Int).Div(v.Num(), v.Denom()) // Euclidean: floor for positive denominators
		if n.op == opCeil && !v.IsInt() {
			q.Add(q, big.NewInt(1))
		}
		return new(big.Rat).SetInt(q), true
	case opSum:
		return exactSum(n, env, budget)
	case opFunc:
		switch n.name {
		case "det":
			if len(n.kids) == 1 {
				if d := detNode(matrixOf(n.kids[0])); d != nil {
					return exactEnv(d, env, budget)
				}
			}
			return nil, false
		case "mod":
			if len(n.kids) != 2 {
				return nil, false
			}
			a, ok1 := exactEnv(n.kids[0], env, budget)
			b, ok2 := exactEnv(n.kids[1], env, budget)
			if !ok1 || !ok2 || b.Sign() == 0 {
				return nil, false
			}
			q := new(big.Rat).Quo(a, b)
			f := new(big.Int).Div(q.Num(), q.Denom()) // floor
			r := new(big.Rat).Sub(a, new(big.Rat).Mul(b, new(big.Rat).SetInt(f)))
			return r, ratSmall(r)
		case "sgn":
			if len(n.kids) != 1 {
				return nil, false
			}
			a, ok := exactEnv(n.kids[0], env, budget)
			if !ok {
				return nil, false
			}
			return new(big.Rat).SetInt64(int64(a.Sign())), true
		case "gcd", "lcm", "max", "min":
			if len(n.kids) < 1 {
				return nil, false
			}
			var acc *big.Rat
			for _, k := range n.kids {
				v, ok := exactEnv(k, env, budget)
				if !ok {
					return nil, false
				}
				if acc == nil {
					acc = new(big.Rat).Set(v)
					continue
				}
				switch n.name {
				case "max":
					if v.Cmp(acc) > 0 {
						acc.Set(v)
					}
				case "min":
					if v.Cmp(acc) < 0 {
						acc.Set(v)
					}
				default:
					if !v.IsInt() || !acc.IsInt() {
						return nil, false
					}
					g := new(big.Int).GCD(nil, nil, new(big.Int).Abs(acc.Num()), new(big.Int).Abs(v.Num()))
					if n.name == "gcd" {
						acc.SetInt(g)
					} else if g.Sign() != 0 {
						l := new(big.Int).Mul(acc.Num(), v.Num())
						l.Abs(l).Quo(l, g)
						acc.SetInt(l)
					}
				}
			}
			return acc, true
		}
	}
	return nil, false
}

func exactSum(n *node, env []ratEnv, budget *int) (*big.Rat, bool) {
	lo, ok1 := exactEnv(n.kids[1], env, budget)
	hi, ok2 := exactEnv(n.kids[2], env, budget)
	if !ok1 || !ok2 || !lo.IsInt() || !hi.IsInt() || !lo.Num().IsInt64() || !hi.Num().IsInt64() {
		return nil, false
	}
	a, b := lo.Num().Int64(), hi.Num().Int64()
	if b-a > maxSumTerms {
		return nil, false
	}
	acc := new(big.Rat)
	if n.name == "prod" {
		acc.SetInt64(1)
	}
	env = append(env, ratEnv{name: n.kids[0].name})
	for k := a; k <= b; k++ {
		env[len(env)-1].val = new(big.Rat).SetInt64(k)
		v, ok := exactEnv(n.kids[3], env, budget)
		if !ok {
			return nil, false
		}
		if n.name == "prod" {
			acc.Mul(acc, v)
		} else {
			acc.Add(acc, v)
		}
		if !ratSmall(acc) {
			return nil, false
		}
	}
	return acc, true
}

// ratPow computes b^e for integer e, or for e = p/q when b is a perfect
// q-th power.
func ratPow(b, e *big.Rat) (*big.Rat, bool) {
	if !e.IsInt() {
		if !e.Denom().IsInt64() || e.Denom().Int64() > 64 {
			return nil, false
		}
		root, ok := ratRoot(b, e.Denom().Int64())
		if !ok {
			return nil, false
		}
		return ratPow(root, new(big.Rat).SetInt(e.Num()))
	}
	if !e.Num().IsInt64() {
		return nil, false
	}
	k := e.Num().Int64()
	if k > maxExactExponent || k < -maxExactExponent {
		return nil, false
	}
	if b.Sign() == 0 {
		if k < 0 {
			return nil, false
		}
		if k == 0 {
			return new(big.Rat).SetInt64(1), true
		}
		return new(big.Rat), true
	}
	ak := k
	if ak < 0 {
		ak = -ak
	}
	// Size check before computing: bits(result) ≈ bits(base) * |k|.
	if int64(b.Num().BitLen())*ak > maxRatBits || int64(b.Denom().BitLen())*ak > maxRatBits {
		if !(b.Num().BitLen() <= 1 && b.Denom().BitLen() <= 1) { // ±1 is cheap
			return nil, false
		}
	}
	kb := big.NewInt(ak)
	num := new(big.Int).Exp(b.Num(), kb, nil)
	den := new(big.Int).Exp(b.Denom(), kb, nil)
	if k < 0 {
		num, den = den, num
	}
	return new(big.Rat).SetFrac(num, den), true
}

// ratRoot returns the exact k-th root of x when it is rational. Odd roots
// of negatives are real; even roots of negatives are not rational.
func ratRoot(x *big.Rat, k int64) (*big.Rat, bool) {
	if k == 1 {
		return x, true
	}
	neg := x.Sign() < 0
	if neg && k%2 == 0 {
		return nil, false
	}
	a := new(big.Rat).Abs(x)
	n, ok1 := intRoot(a.Num(), k)
	d, ok2 := intRoot(a.Denom(), k)
	if !ok1 || !ok2 {
		return nil, false
	}
	r := new(big.Rat).SetFrac(n, d)
	if neg {
		r.Neg(r)
	}
	return r, true
}

func intRoot(x *big.Int, k int64) (*big.Int, bool) {
	if x.Sign() == 0 || x.Cmp(big.NewInt(1)) == 0 {
		return new(big.Int).Set(x), true
	}
	if k == 2 {
		r := new(big.Int).Sqrt(x)
		return r, new(big.Int).Mul(r, r).Cmp(x) == 0
	}
	// Float estimate, then check neighbours exactly.
	f, _ := new(big.Float).SetInt(x).Float64()
	if stdmath.IsInf(f, 0) {
		return nil, false
	}
	est := stdmath.Round(stdmath.Pow(f, 1/float64(k)))
	for d := -1.0; d <= 1; d++ {
		c := big.NewInt(int64(est + d))
		if c.Sign() <= 0 {
			continue
		}
		if new(big.Int).Exp(c, big.NewInt(k), nil).Cmp(x) == 0 {
			return c, true
		}
	}
	return nil, false
}

// ---------------------------------------------------------------------------
// Floating-point evaluation (complex128) at a point.

var (
	errEval     = errors.New("cannot evaluate")
	errBound    = errors.New("non-integer bound")
	errBudget   = errors.New("evaluation budget exhausted")
	errDomain   = errors.New("outside domain")
	errInfinte  = errors.New("infinite value")
	errSumTerms = errors.New("too many terms")
)

// point assigns every free name a deterministic pseudo-random value. With
// integers set, values are integers in [2, 13] (for sums with symbolic
// bounds); otherwise reals in [0.3, 2.3].
type point struct {
	seed     uint64
	integers bool
	env      []cenv
	budget   int
}

type cenv struct {
	name string
	val  complex128
}

func hashName(name string, seed uint64) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	x := h.Sum64() ^ (seed * 0x9e3779b97f4a7c15)
	// splitmix64 finaliser
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func (pt *point) value(name string) complex128 {
	for i := len(pt.env) - 1; i >= 0; i-- {
		if pt.env[i].name == name {
			return pt.env[i].val
		}
	}
	u := hashName(name, pt.seed)
	if pt.integers {
		return complex(float64(2+u%12), 0)
	}
	return complex(0.3+2.0*float64(u>>11)/float64(1<<53), 0)
}

func isReal(z complex128) bool { return imag(z) == 0 }

func evalC(n *node, pt *point) (complex128, error) {
	if n == nil {
		return 0, errEval
	}
	pt.budget--
	if pt.budget < 0 {
		return 0, errBudget
	}
	switch n.op {
	case opNum:
		f, _ := n.num.Float64()
		if stdmath.IsInf(f, 0) {
			return 0, errInfinte
		}
		return complex(f, 0), nil
	case opSym:
		return pt.value(n.name), nil
	case opConst:
		switch n.name {
		case "pi":
			return complex(stdmath.Pi, 0), nil
		case "e":
			return complex(stdmath.E, 0), nil
		case "i":
			return complex(0, 1), nil
		case "inf":
			return complex(stdmath.Inf(1), 0), nil
		}
		return 0, errEval
	case opAdd, opMul:
		var acc complex128
		if n.op == opMul {
			acc = 1
		}
		for _, k := range n.kids {
			v, err := evalC(k, pt)
			if err != nil {
				return 0, err
			}
			if n.op == opAdd {
				acc += v
			} else {
				acc *= v
			}
		}
		return finite(acc)
	case opNeg:
		v, err := evalC(n.kids[0], pt)
		return -v, err
	case opDiv, opRatio:
		a, err := evalC(n.kids[0], pt)
		if err != nil {
			return 0, err
		}
		b, err := evalC(n.kids[1], pt)
		if err != nil {
			return 0, err
		}
		if b == 0 {
			return 0, errDomain
		}
		return finite(a / b)
	case opPercent:
		v, err := evalC(n.kids[0], pt)
		return v / 100, err
	case opDegree:
		v, err := evalC(n.kids[0], pt)
		return v * complex(stdmath.Pi/180, 0), err
	case opPow:
		b, err := evalC(n.kids[0], pt)
		if err != nil {
			return 0, err
		}
		// Rational exponents with odd denominators take the real root.
		if r, ok := exact(n.kids[1]); ok && !r.IsInt() && r.Denom().IsInt64() && r.Denom().Int64()%2 == 1 && isReal(b) && real(b) < 0 {
			f, _ := r.Float64()
			v := -stdmath.Pow(-real(b), f)
			if r.Num().Bit(0) == 0 {
				v = -v
			}
			return finite(complex(v, 0))
		}
		e, err := evalC(n.kids[1], pt)
		if err != nil {
			return 0, err
		}
		return cpow(b, e)
	case opRoot:
		x, err := evalC(n.kids[0], pt)
		if err != nil {
			return 0, err
		}
		k := complex(2, 0)
		if n.kids[1] != nil {
			k, err = evalC(n.kids[1], pt)
			if err != nil {
				return 0, err
			}
		}
		if k == 0 {
			return 0, errDomain
		}
		if isReal(x) && isReal(k) && real(x) < 0 && real(k) == stdmath.Trunc(real(k)) && int64(real(k))%2 != 0 {
			return finite(complex(-stdmath.Pow(-real(x), 1/real(k)), 0))
		}
		if isReal(x) && real(x) >= 0 && isReal(k) {
			return finite(complex(stdmath.Pow(real(x), 1/real(k)), 0))
		}
		return cpow(x, 1/k)
	case opFact:
		v, err := evalC(n.kids[0], pt)
		if err != nil {
			return 0, err
		}
		if !isReal(v) || real(v) < 0 || real(v) > 170 {
			return 0, errDomain
		}
		return finite(complex(stdmath.Gamma(real(v)+1), 0))
	case opBinom:
		a, err := evalC(n.kids[0], pt)
		if err != nil {
			return 0, err
		}
		b, err := evalC(n.kids[1], pt)
		if err != nil {
			return 0, err
		}
		if !isReal(a) || !isReal(b) || real(a) > 170 || real(a) < 0 || real(b) < 0 || real(b) > real(a) {
			return 0, errDomain
		}
		x, y := real(a), real(b)
		return finite(complex(stdmath.Gamma(x+1)/(stdmath.Gamma(y+1)*stdmath.Gamma(x-y+1)), 0))
	case opAbs:
		v, err := evalC(n.kids[0], pt)
		return complex(cmplx.Abs(v), 0), err
	case opFloor, opCeil:
		v, err := evalC(n.kids[0], pt)
		if err != nil {
			return 0, err
		}
		if !isReal(v) {
			return 0, errDomain
		}
		if n.op == opFloor {
			return complex(stdmath.Floor(real(v)+1e-12), 0), nil
		}
		return complex(stdmath.Ceil(real(v)-1e-12), 0), nil
	case opSub:
		// An indexed name a_k is an unknown function of its index value.
		idx, err := evalC(n.kids[1], pt)
		if err != nil {
			return 0, err
		}
		key := n.kids[0].String() + "_" + formatKey(idx)
		return pt.value(key), nil
	case opFunc:
		if n.name == "det" && len(n.kids) == 1 {
			if d := detNode(matrixOf(n.kids[0])); d != nil {
				return evalC(d, pt)
			}
		}
		return evalFunc(n, pt)
	case opSum:
		return evalSum(n, pt)
	}
	return 0, errEval
}

func formatKey(z complex128) string {
	r := stdmath.Round(real(z)*1e9) / 1e9
	i := stdmath.Round(imag(z)*1e9) / 1e9
	return big.NewFloat(r).Text('g', 12) + "," + big.NewFloat(i).Text('g', 12)
}

func finite(z complex128) (complex128, error) {
	if cmplx.IsNaN(z) || cmplx.IsInf(z) {
		return 0, errInfinte
	}
	return z, nil
}

func cpow(b, e complex128) (complex128, error) {
	if isReal(b) && isReal(e) {
		x, y := real(b), real(e)
		if x >= 0 || y == stdmath.Trunc(y) {
			if x == 0 && y < 0 {
				return 0, errDomain
			}
			return finite(complex(stdmath.Pow(x, y), 0))
		}
	}
	if b == 0 {
		if real(e) > 0 {
			return 0, nil
		}
		return 0, errDomain
	}
	return finite(cmplx.Pow(b, e))
}

func evalFunc(n *node, pt *point) (complex128, error) {
	args := make([]complex128, 0, 2)
	for _, k := range n.kids {
		v, err := evalC(k, pt)
		if err != nil {
			return 0, err
		}
		args = append(args, v)
	}
	if len(args) == 0 {
		return 0, errEval
	}
	x := args[0]
	var r complex128
	switch n.name {
	case "sin":
		r = cmplx.Sin(x)
	case "cos":
		r = cmplx.Cos(x)
	case "tan":
		r = cmplx.Tan(x)
	case "sec":
		r = 1 / cmplx.Cos(x)
	case "csc":
		r = 1 / cmplx.Sin(x)
	case "cot":
		r = 1 / cmplx.Tan(x)
	case "arcsin":
		r = cmplx.Asin(x)
	case "arccos":
		r = cmplx.Acos(x)
	case "arctan":
		r = cmplx.Atan(x)
	case "arcsec":
		r = cmplx.Acos(1 / x)
	case "arccsc":
		r = cmplx.Asin(1 / x)
	case "arccot":
		r = cmplx.Atan(1 / x)
	case "sinh":
		r = cmplx.Sinh(x)
	case "cosh":
		r = cmplx.Cosh(x)
	case "tanh":
		r = cmplx.Tanh(x)
	case "coth":
		r = 1 / cmplx.Tanh(x)
	case "sech":
		r = 1 / cmplx.Cosh(x)
	case "csch":
		r = 1 / cmplx.Sinh(x)
	case "arcsinh":
		r = cmplx.Asinh(x)
	case "arccosh":
		r = cmplx.Acosh(x)
	case "arctanh":
		r = cmplx.Atanh(x)
	case "sgn":
		if !isReal(x) {
			return 0, errDomain
		}
		switch {
		case real(x) > 0:
			r = 1
		case real(x) < 0:
			r = -1
		}
	case "mod":
		if len(args) != 2 || !isReal(x) || !isReal(args[1]) || args[1] == 0 {
			return 0, errDomain
		}
		a, b := real(x), real(args[1])
		r = complex(a-b*stdmath.Floor(a/b+1e-15), 0)
	case "exp":
		r = cmplx.Exp(x)
	case "ln":
		if x == 0 {
			return 0, errDomain
		}
		r = cmplx.Log(x)
	case "log", "lg":
		if x == 0 {
			return 0, errDomain
		}
		r = cmplx.Log10(x)
	case "log_", "ln_", "lg_":
		if len(args) != 2 || x == 0 || args[1] == 0 || args[1] == 1 {
			return 0, errDomain
		}
		r = cmplx.Log(x) / cmplx.Log(args[1])
	case "max", "min", "gcd", "lcm":
		if v, ok := exact(n); ok {
			f, _ := v.Float64()
			r = complex(f, 0)
		} else {
			if n.name != "max" && n.name != "min" {
				return 0, errEval
			}
			best := real(x)
			for _, a := range args[1:] {
				if !isReal(a) {
					return 0, errDomain
				}
				if n.name == "max" && real(a) > best || n.name == "min" && real(a) < best {
					best = real(a)
				}
			}
			r = complex(best, 0)
		}
	default:
		// Unknown function: a deterministic pseudo-random value of its
		// arguments, the same on both sides.
		key := n.name
		for _, a := range args {
			key += "|" + formatKey(a)
		}
		r = pt.value(key)
	}
	// Tidy values that are real up to rounding (sin of a real).
	if isReal(x) && stdmath.Abs(imag(r)) < 1e-14*stdmath.Max(1, stdmath.Abs(real(r))) {
		r = complex(real(r), 0)
	}
	return finite(r)
}

func evalSum(n *node, pt *point) (complex128, error) {
	lo, err := evalC(n.kids[1], pt)
	if err != nil {
		return 0, err
	}
	hi, err := evalC(n.kids[2], pt)
	if err != nil {
		return 0, err
	}
	a, b := real(lo), real(hi)
	if !isReal(lo) || !isReal(hi) || a != stdmath.Trunc(a) || b != stdmath.Trunc(b) {
		return 0, errBound
	}
	if b-a > maxSumTerms {
		return 0, errSumTerms
	}
	var acc complex128
	if n.name == "prod" {
		acc = 1
	}
	pt.env = append(pt.env, cenv{name: n.kids[0].name})
	defer func() { pt.env = pt.env[:len(pt.env)-1] }()
	for k := a; k <= b; k++ {
		pt.env[len(pt.env)-1].val = complex(k, 0)
		v, err := evalC(n.kids[3], pt)
		if err != nil {
			return 0, err
		}
		if n.name == "prod" {
			acc *= v
		} else {
			acc += v
		}
	}
	return finite(acc)
}

// freeNames collects the names that take values at a point (variables and
// indexed names), excluding names bound by a \sum.
func freeNames(n *node, bound []string, out map[string]bool, depth int) {
	if n == nil || depth > maxDepth*4 {
		return
	}
	switch n.op {
	case opSym:
		for _, b := range bound {
			if b == n.name {
				return
			}
		}
		out[n.name] = true
		return
	case opSum:
		freeNames(n.kids[1], bound, out, depth+1)
		freeNames(n.kids[2], bound, out, depth+1)
		freeNames(n.kids[3], append(bound, n.kids[0].name), out, depth+1)
		return
	case opFunc:
		switch n.name {
		case "sin", "cos", "tan", "sec", "csc", "cot", "arcsin", "arccos", "arctan", "arcsec",
			"arccsc", "arccot", "sinh", "cosh", "tanh", "coth", "sech", "csch", "exp", "ln", "log",
			"lg", "log_", "ln_", "lg_", "max", "min", "gcd", "lcm", "mod", "sgn", "arcsinh", "arccosh", "arctanh", "det":
		default:
			out["\x00"+n.name] = true // unknown function: symbolic
		}
	}
	for _, k := range n.kids {
		freeNames(k, bound, out, depth+1)
	}
}

// hasDecimal reports whether n contains a number written as a decimal.
func hasDecimal(n *node) bool {
	if n == nil {
		return false
	}
	if n.op == opNum {
		return n.dec
	}
	for _, k := range n.kids {
		if hasDecimal(k) {
			return true
		}
	}
	return false
}

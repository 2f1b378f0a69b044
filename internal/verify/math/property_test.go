package math

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/verify"
)

// Property tests: a random expression and its equal rewritings (expanded,
// factored, reordered, a scaled fraction, a decimal with enough digits,
// LaTeX against plain text) are equal; small perturbations are not.

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

func nonZero(r *rand.Rand, n int) int {
	for {
		if v := r.IntN(2*n+1) - n; v != 0 {
			return v
		}
	}
}

// poly is a polynomial in one variable: coefficients by degree.
type poly []int

func (p poly) latex(v string, shuffle *rand.Rand) string { return p.render(v, shuffle, true) }
func (p poly) plain(v string, shuffle *rand.Rand) string { return p.render(v, shuffle, false) }

func (p poly) render(v string, shuffle *rand.Rand, latex bool) string {
	var terms []string
	for d := len(p) - 1; d >= 0; d-- {
		c := p[d]
		if c == 0 {
			continue
		}
		var t string
		switch {
		case d == 0:
			t = fmt.Sprint(c)
		default:
			x := v
			if d > 1 {
				if latex {
					x = fmt.Sprintf("%s^{%d}", v, d)
				} else {
					x = fmt.Sprintf("%s^%d", v, d)
				}
			}
			switch {
			case c == 1:
				t = x
			case c == -1:
				t = "-" + x
			case latex:
				t = fmt.Sprintf("%d%s", c, x)
			default:
				t = fmt.Sprintf("%d*%s", c, x)
			}
		}
		terms = append(terms, t)
	}
	if len(terms) == 0 {
		return "0"
	}
	if shuffle != nil {
		shuffle.Shuffle(len(terms), func(i, j int) { terms[i], terms[j] = terms[j], terms[i] })
	}
	out := terms[0]
	for _, t := range terms[1:] {
		if strings.HasPrefix(t, "-") {
			out += " - " + t[1:]
		} else {
			out += " + " + t
		}
	}
	return out
}

func (p poly) mul(q poly) poly {
	out := make(poly, len(p)+len(q)-1)
	for i, a := range p {
		for j, b := range q {
			out[i+j] += a * b
		}
	}
	return out
}

func expectStatus(t *testing.T, what, gold, pred string, want verify.Status) {
	t.Helper()
	v := Check(gold, pred, Options{})
	if v.Status != want {
		t.Errorf("%s: gold %q pred %q: got %s (%s), want %s", what, gold, pred, v.Status, v.Reason, want)
	}
}

// TestPropertyPolynomials: a product of linear factors equals its
// expansion, in any term order, LaTeX or plain; changing one coefficient
// by one breaks equality.
func TestPropertyPolynomials(t *testing.T) {
	r := rng(16)
	vars := []string{"x", "t", "a", "n"}
	for k := 0; k < 300; k++ {
		v := vars[k%len(vars)]
		a := nonZero(r, 5)
		nf := 2 + r.IntN(2)
		p := poly{a}
		factored := fmt.Sprint(a)
		plainFactored := fmt.Sprint(a)
		for f := 0; f < nf; f++ {
			root := r.IntN(19) - 9
			p = p.mul(poly{-root, 1})
			sign := "-"
			if root < 0 {
				sign = "+"
			}
			abs := max(root, -root)
			if root == 0 {
				factored += v
				plainFactored += "*" + v
				continue
			}
			factored += fmt.Sprintf(`\left(%s %s %d\right)`, v, sign, abs)
			plainFactored += fmt.Sprintf("*(%s %s %d)", v, sign, abs)
		}
		expandedLatex := p.latex(v, nil)
		expandedPlain := p.plain(v, r)
		expectStatus(t, "factored vs expanded", factored, expandedLatex, verify.Correct)
		expectStatus(t, "expanded vs reordered plain", expandedLatex, expandedPlain, verify.Correct)
		expectStatus(t, "plain factored vs LaTeX expanded", plainFactored, p.latex(v, r), verify.Correct)
		// Perturb one coefficient by one.
		q := append(poly(nil), p...)
		d := r.IntN(len(q))
		q[d] += 1 - 2*r.IntN(2)
		expectStatus(t, "perturbed coefficient", factored, q.latex(v, r), verify.Incorrect)
		// Perturb a root.
		expectStatus(t, "other variable", factored, p.latex(vars[(k+1)%len(vars)], nil), verify.Incorrect)
	}
}

// TestPropertyFractions: p/q equals its scaled fractions, its plain and
// mixed spellings and a decimal with twelve significant digits; p/q ± 1/q,
// q/p and a three-digit decimal do not.
func TestPropertyFractions(t *testing.T) {
	r := rng(17)
	for k := 0; k < 400; k++ {
		p := nonZero(r, 200)
		q := 2 + r.IntN(97)
		f := big.NewRat(int64(p), int64(q))
		num, den := f.Num().Int64(), f.Denom().Int64()
		gold := fmt.Sprintf(`\frac{%d}{%d}`, p, q)
		s := 2 + r.IntN(9)
		expectStatus(t, "scaled", gold, fmt.Sprintf(`\dfrac{%d}{%d}`, p*s, q*s), verify.Correct)
		expectStatus(t, "plain", gold, fmt.Sprintf("%d/%d", p, q), verify.Correct)
		if num < 0 {
			expectStatus(t, "sign outside", gold, fmt.Sprintf(`-\frac{%d}{%d}`, -num, den), verify.Correct)
		}
		dec := f.FloatString(14)
		if f.IsInt() {
			dec = f.FloatString(0)
		}
		expectStatus(t, "decimal, 14 places", gold, dec, verify.Correct)
		if den > 1 && num > den {
			w := num / den
			expectStatus(t, "mixed", gold, fmt.Sprintf("%d %d/%d", w, num-w*den, den), verify.Correct)
			expectStatus(t, "latex mixed", gold, fmt.Sprintf(`%d\frac{%d}{%d}`, w, num-w*den, den), verify.Correct)
		}
		expectStatus(t, "plus 1/q", gold, fmt.Sprintf(`\frac{%d}{%d}`, p+1, q), verify.Incorrect)
		if num != den && num != -den {
			expectStatus(t, "reciprocal", gold, fmt.Sprintf(`\frac{%d}{%d}`, q, p), verify.Incorrect)
		}
		short := f.FloatString(3)
		if x, _ := new(big.Rat).SetString(short); x.Cmp(f) != 0 {
			expectStatus(t, "three places", gold, short, verify.Incorrect)
		}
	}
}

// TestPropertyRadicals: a√b equals √(a²b), its plain spelling and a
// twelve-digit decimal; a different radicand does not.
func TestPropertyRadicals(t *testing.T) {
	r := rng(18)
	squarefree := []int{2, 3, 5, 6, 7, 10, 11, 13, 14, 15, 17, 19, 21}
	for k := 0; k < 200; k++ {
		a := 1 + r.IntN(12)
		b := squarefree[r.IntN(len(squarefree))]
		gold := fmt.Sprintf(`%d\sqrt{%d}`, a, b)
		expectStatus(t, "radicand", gold, fmt.Sprintf(`\sqrt{%d}`, a*a*b), verify.Correct)
		expectStatus(t, "plain", gold, fmt.Sprintf("%d*sqrt(%d)", a, b), verify.Correct)
		expectStatus(t, "over a root", gold, fmt.Sprintf(`\frac{%d}{\sqrt{%d}}`, a*b, b), verify.Correct)
		x := new(big.Float).SetPrec(200).SetInt64(int64(a * a * b))
		x.Sqrt(x)
		expectStatus(t, "decimal", gold, x.Text('f', 12), verify.Correct)
		expectStatus(t, "other radicand", gold, fmt.Sprintf(`\sqrt{%d}`, a*a*b+1), verify.Incorrect)
		expectStatus(t, "four places", gold, x.Text('f', 4), verify.Incorrect)
	}
}

// TestPropertyTwoVariables: (x+cy)^2 expanded, reordered, scaled
// equations; a wrong cross term is not equal.
func TestPropertyTwoVariables(t *testing.T) {
	r := rng(19)
	for k := 0; k < 200; k++ {
		c := nonZero(r, 6)
		gold := fmt.Sprintf(`(x + %dy)^2`, c)
		terms := []string{"x^2", fmt.Sprintf("%d*x*y", 2*c), fmt.Sprintf("%d*y^2", c*c)}
		r.Shuffle(len(terms), func(i, j int) { terms[i], terms[j] = terms[j], terms[i] })
		expectStatus(t, "expanded", gold, strings.Join(terms, " + "), verify.Correct)
		expectStatus(t, "wrong cross term", gold, fmt.Sprintf("x^2 + %d x y + %d y^2", 2*c+1, c*c), verify.Incorrect)
		s := 2 + r.IntN(5)
		expectStatus(t, "scaled equation", fmt.Sprintf("y = %dx + %d", c, s),
			fmt.Sprintf("%dy - %dx = %d", s, s*c, s*s), verify.Correct)
		expectStatus(t, "different line", fmt.Sprintf("y = %dx + %d", c, s),
			fmt.Sprintf("%dy - %dx = %d", s, s*c, s*s+1), verify.Incorrect)
	}
}

package math

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/verify"
)

// groups writes n with sep between groups of three digits.
func groups(n int, sep string) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(c)
	}
	return b.String()
}

// TestNumberSpellings: a number written with any thousands separator
// (plain, LaTeX ",\!", "{,}", "\,"), a currency sign, a unit or trailing
// text, boxed, marked or as the last number, is read as that number, never
// as its last digit group (GSM8K problem 22: "\$8,\!096" was read as 096).
func TestNumberSpellings(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	seps := []string{"", ",", "{,}", `,\!`, `\,`}
	wraps := []func(string) string{
		func(x string) string { return `\boxed{` + x + `}` },
		func(x string) string { return `\(\boxed{` + x + `}\)` },
		func(x string) string { return "The answer is " + x + "." },
		func(x string) string { return "Answer: " + x },
		func(x string) string { return "#### " + x },
		func(x string) string { return "so in all the merchant makes " + x + " in profit" }, // last number
		func(x string) string { return "Total = " + x + ` \text{ per month}` },
	}
	decorate := []func(string) string{
		func(x string) string { return x },
		func(x string) string { return `\$` + x },
		func(x string) string { return "$" + x },
		func(x string) string { return x + " dollars" },
		func(x string) string { return x + `\text{ cm}` },
	}
	for range 400 {
		n := 1000 + rng.IntN(9_999_000)
		sep := seps[rng.IntN(len(seps))]
		wrap := wraps[rng.IntN(len(wraps))]
		dec := decorate[rng.IntN(len(decorate))]
		if strings.HasPrefix(dec("x"), "$") && !strings.HasPrefix(wrap("x"), "so") {
			continue // a bare "$" opens math mode in a marked answer
		}
		text := wrap(dec(groups(n, sep)))
		if r := Check(fmt.Sprint(n), text, Options{}); r.Status != verify.Correct {
			t.Errorf("%q against %d: %s %q (%s)", text, n, r.Status, r.Extracted, r.Reason)
		}
		tail := n % 1000
		if r := Check(fmt.Sprint(tail), text, Options{}); r.Status == verify.Correct {
			t.Errorf("%q read as its last group %d", text, tail)
		}
	}
}

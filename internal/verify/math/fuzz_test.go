package math

import (
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/testfiles"
)

// fuzzSeeds are inputs that exercised parser and extractor corner cases.
var fuzzSeeds = []string{
	`\boxed{\frac{1}{2}}`, `\frac12`, `\sqrt[3]{-8}`, `2^{2^{2^{2^{2}}}}`, `10^{100000}`, `1000!`,
	`\{1\pm\sqrt{5},-2\}`, `(0,1]\cup[2,\infty)`, `x \in [-2,7]`, `-2 \le x \le 7`, `1,000.99`,
	`\begin{pmatrix}1&2\\3&4\end{pmatrix}`, `\left( 3, \frac{\pi}{2} \right)`, `50\%`, `45^\circ`,
	`y = -\frac{1}{2}x + \frac{3}{4}`, `\sum_{k=0}^{n-1} F_k F_{n-k-1}`, `0.\overline{3}`, `12^{\mathrm{th}}`,
	`\boxed{1} and \boxed{2}`, "Final Answer: The final answer is $24$. I hope it is correct.", "#### 72",
	`\frac{`, `\sqrt`, `((((((((((`, `|||`, `\begin{pmatrix}`, `$$`, `\boxed{`, `^^^`, `\left.`, "\x00\xff",
	`2\frac{1}{2}`, `\text{(C)}`, `\mathrm{e}^{i\pi}`, `\log_2 8`, `\binom{10}{3}`, `x^{x^{x^{x}}}`,
}

func addSeeds(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "1")
	}
	// The carried equivalence cases are seeds too.
	for _, c := range readCasesQuiet(testfiles.Resolve("verifier-cases/math_equivalence.jsonl")) {
		f.Add(c.Pred, c.Gold)
	}
}

// FuzzParse: any pair of answer strings is parsed and compared without
// panicking and within a bounded time.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, a, b string) {
		start := time.Now()
		pa, errA := parseAnswer(cleanAnswer(normalizeText(a)))
		pb, errB := parseAnswer(cleanAnswer(normalizeText(b)))
		if errA == nil && errB == nil {
			newJudge(0).equal(pa.root, pb.root, 0)
			_ = pa.root.String()
		}
		check(a, b, Options{})
		check(b, a, Options{FloatRounding: 3})
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("parse/compare took %s", d)
		}
	})
}

// FuzzExtract: any completion is searched and graded without panicking and
// within a bounded time.
func FuzzExtract(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, completion, gold string) {
		start := time.Now()
		extractFromCompletion(completion)
		extractChoice(completion, 'E')
		check(gold, completion, Options{PredIsCompletion: true})
		check(completion, gold, Options{GoldIsCompletion: true})
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("extraction took %s", d)
		}
	})
}

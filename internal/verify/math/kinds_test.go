package math

import (
	"testing"

	"github.com/reach-lab/reach/internal/verify"
)

// The kinds of issue 16, each with cases of its own (not corpus cases).

type kindCase struct {
	gold, pred string
	completion bool
	want       verify.Status
}

func runKind(t *testing.T, cases []kindCase) {
	t.Helper()
	for _, tc := range cases {
		v := Check(tc.gold, tc.pred, Options{PredIsCompletion: tc.completion})
		if v.Status != tc.want {
			t.Errorf("gold %q pred %q: got %s (extracted %q, rule %s: %s), want %s",
				tc.gold, tc.pred, v.Status, v.Extracted, v.Rule, v.Reason, tc.want)
		}
	}
}

// Policy (doc.go, Approximations): an exact value followed by its
// approximation is the exact value (or the approximation it states); a
// value marked ≈ with at least three significant digits equals the
// reference rounded to the digits shown; an unmarked decimal keeps the
// strict decimal policy.
func TestKindApproximation(t *testing.T) {
	runKind(t, []kindCase{
		{`\frac{\sqrt2}{2}`, `\frac{\sqrt 2}{2} \approx 0.707`, false, verify.Correct},
		{`0.707`, `\frac{\sqrt 2}{2} \approx 0.707`, false, verify.Correct},
		{`\frac{\sqrt2}{2}`, `\frac{\sqrt 2}{2} \approx 0.71`, false, verify.Correct},
		{`\frac{\sqrt3}{2}`, `\frac{\sqrt 2}{2} \approx 0.707`, false, verify.Incorrect},
		{`4.5`, `t \approx 4.5`, false, verify.Correct},
		{`\frac92`, `t \approx 4.5`, false, verify.Correct},
		{`4.47`, `t \approx 4.5`, false, verify.Incorrect}, // two significant digits: too coarse
		{`\frac{7}{\pi}`, `\frac{7}{\pi} \approx 2.23`, false, verify.Correct},
		{`2.23`, `\frac{7}{\pi} \approx 2.23`, false, verify.Correct},
		{`\frac{7}{\pi}`, `\approx 2.23`, false, verify.Correct},
		{`\frac{7}{\pi}`, `\approx 2.24`, false, verify.Incorrect},
		{`\frac{7}{\pi}`, `2.23`, false, verify.Incorrect}, // unmarked: a rounded answer
		{`\sqrt{3}`, `Exact: \boxed{\sqrt 3}, and numerically \boxed{\approx 1.732}.`, true, verify.Correct},
		{`\sqrt{3}`, `So $x=\boxed{\sqrt{3}} \approx \boxed{1.732}$.`, true, verify.Correct},
		{`\sqrt{3}`, `The answer is approximately 1.732.`, true, verify.Correct},
		{`\sqrt{3}`, `The answer is approximately 1.73.`, true, verify.Correct},
		{`\sqrt{3}`, `The answer is approximately 1.7.`, true, verify.Incorrect},
		{`\frac{\sqrt3}{3} \approx 0.577`, `\frac{\sqrt{3}}{3}`, false, verify.Correct},
		{`x = \frac13`, `x = 0.5 + 1/3 - 0.5 \approx 0.33`, false, verify.Correct},
	})
}

// Policy (doc.go, Number formats): plain-text mixed numbers.
func TestKindMixedNumbers(t *testing.T) {
	runKind(t, []kindCase{
		{`\frac{13}{4}`, `3 1/4`, false, verify.Correct},
		{`\frac{1}{2}`, `1 1/2`, false, verify.Incorrect},
		{`\frac32`, `1 1/2`, false, verify.Correct},
		{`-\frac{40}{9}`, `-4 4/9`, false, verify.Correct},
		{`\frac{9004}{9}`, `1 000 4/9`, false, verify.Correct},
		{`\frac{4}{9}\%`, `0 4/9\%`, false, verify.Correct},
		{`\frac{40}{900}`, `4 4/9%`, false, verify.Correct},
		{`12`, `11 6/6`, false, verify.Unparseable},            // not a mixed number: no value
		{`\frac{71}{6}`, "11\n5/6", false, verify.Incorrect},   // two lines: the last one, 5/6
		{`\frac{103}{9}`, `(11) 4/9`, false, verify.Incorrect}, // (11)·4/9
		{`\frac{13}{4}`, `so the pizza weighs 3 1/4`, true, verify.Correct},
		{`\frac{13}{4}`, `The answer is 3 1/4 pounds.`, true, verify.Correct},
		{`2\frac{1}{2}`, `5/2`, false, verify.Correct},
	})
}

// Policy (doc.go, Equations and Inequalities): a named left-hand side is a
// label; a bounded label or |v| describes a set.
func TestKindNamedLeftSides(t *testing.T) {
	runKind(t, []kindCase{
		{`\frac25`, `\frac{AE}{EC} = \frac{2}{5}`, false, verify.Correct},
		{`\frac25`, `\frac{AE}{EC} = \frac{3}{5}`, false, verify.Incorrect},
		{`\frac{1}{\sqrt6}`, `\frac{NO}{BO}=\frac{1}{\sqrt{6}}`, false, verify.Correct},
		{`\frac{1}{\sqrt6}`, `NO/BO = \frac{\sqrt6}{6}`, false, verify.Correct},
		{`[-1, 2]`, `-1 \le g(t) \le 2`, false, verify.Correct},
		{`[-1, 2)`, `-1 \le g(t) \le 2`, false, verify.Incorrect},
		{`(0,1)`, `0<f(x)<1`, false, verify.Correct},
		{`(-2, \infty)`, `Therefore y > -2`, false, verify.Correct},
		{`y > -2`, `Therefore $y > -2$.`, true, verify.Correct},
		{`y > -2`, `so we conclude that y > -2`, false, verify.Correct},
		{`y > -2`, `so we conclude that y < -2`, false, verify.Incorrect},
	})
}

// Policy (doc.go, Solution sets): assignments are tuples ordered by label;
// |w| bounded on both sides is a union of two intervals for real w.
func TestKindSolutionSets(t *testing.T) {
	runKind(t, []kindCase{
		{`(1,3),(2,5)`, `a=1,b=3; a=2,b=5`, false, verify.Correct},
		{`(1,3),(2,5)`, `a=2, b=5 or a=1, b=3`, false, verify.Correct},
		{`(1,3),(2,5)`, `a=1,b=3; a=2,b=4`, false, verify.Incorrect},
		{`(1,3),(2,5)`, `a=1,b=3`, false, verify.Incorrect},
		{`p=5,q=2;p=7,q=2`, `(5,2),(7,2)`, false, verify.Correct},
		{`(1,3)`, `b=3, a=1`, false, verify.Correct},
		{`(3,1)`, `b=3, a=1`, false, verify.Incorrect},
		{`(x,y,z) = (1,2,3)`, `x=1, y=2, z=3`, false, verify.Correct},
		{`[-3,-2] \cup [2,3]`, `2 \le |w| \le 3`, false, verify.Correct},
		{`2 \le |w| \le 3`, `w \in [-3,-2] \cup [2,3]`, false, verify.Correct},
		{`[-3,-2] \cup [2,3]`, `2 < |w| \le 3`, false, verify.Incorrect},
		{`[-3,3]`, `|w| \le 3`, false, verify.Correct},
		{`(-\infty,-2) \cup (2,\infty)`, `|x| > 2`, false, verify.Correct},
		{`[-3, 3]`, `-1 \le |w| \le 3`, false, verify.Correct},
	})
}

// Policy (doc.go, Several boxes): a reference's answer is all it boxed when
// only punctuation and connectives stand between the boxes.
func TestKindSeveralBoxesInReference(t *testing.T) {
	runKind(t, []kindCase{
		{`\boxed{2} and \boxed{5}`, `2, 5`, false, verify.Correct},
		{`\boxed{2} and \boxed{5}`, `5`, false, verify.Incorrect},
		{`\boxed{1}\boxed{2}`, `\{1, 2\}`, false, verify.Correct},
		{`\boxed{1} and and or thus but \boxed{2} and \boxed{3}`, `1,2,3`, false, verify.Correct},
		{`\boxed{1} and and or thus but \boxed{2} and \boxed{3}`, `2,3`, false, verify.Incorrect},
		{`\boxed{1} no no no \boxed{2}`, `1, 2`, false, verify.Incorrect}, // other words: the last box
		{`\boxed{\sqrt3} \approx \boxed{1.732}`, `\sqrt{3}`, false, verify.Correct},
		{`\boxed{004} is the remainder. Final: \boxed{004}`, `4`, false, verify.Correct},
	})
}

// Policy (doc.go, Languages): final-answer markers in other languages mark
// the answer as final (rule final-answer-is, not a fallback rule); a
// sentence after a marker gives its first number.
func TestKindAnswerMarkers(t *testing.T) {
	runKind(t, []kindCase{
		{`5`, `计算得 3 + 2 = 5。所以答案是 5。`, true, verify.Correct},
		{`42`, `Die Rechnung ergibt 40 + 2. Antwort: 42`, true, verify.Correct},
		{`7`, `Решение: 3 + 4 = 7. Ответ: 7`, true, verify.Correct},
		{`\frac{1}{2}`, `Por lo tanto, la respuesta es $\frac{1}{2}$.`, true, verify.Correct},
		{`9`, `Portanto, a resposta é 9.`, true, verify.Correct},
		{`B`, `Analizando las opciones, la respuesta es B, no A.`, true, verify.Correct},
		{`C`, `Donc la réponse est C non A`, true, verify.Correct},
		{`220`, `Réponse : Janeth aura encore 220 $ à payer d'ici 12 mois.`, true, verify.Correct},
		{`34`, `Final Answer: The largest $n$ is 34.`, true, verify.Correct},
		{`3`, `Final Answer: Jane started growing Sphere 3 hours ago.`, true, verify.Correct},
		{`12`, `Answer: 12 apples, since 3 boxes hold 4 each.`, true, verify.Correct},
		{`4`, `Answer: 12 apples, since 3 boxes hold 4 each.`, true, verify.Incorrect},
	})
	for _, c := range []string{`所以答案是 5。`, `Antwort: 5`, `Ответ: 5`, `La respuesta es 5.`} {
		v := Check("5", c, Options{PredIsCompletion: true})
		if v.Rule != RuleFinalAnswer || verify.IsFallbackRule(v.Rule) {
			t.Errorf("%q: rule %q, want %q (a marked answer)", c, v.Rule, RuleFinalAnswer)
		}
	}
}

// Policy (doc.go, Number formats): a comma followed by exactly three digits
// groups thousands (after a first group of one to three digits other than
// a lone 0); otherwise a comma between digits is a decimal comma when the
// reference is one number, and separates items when it is a list. Dots
// grouping threes with a final decimal comma are European (1.234,5); so
// are two or more dot groups (1.234.567). Spaces group thousands (1 000),
// and a comma after them is decimal (1 000,5).
func TestKindNumberFormats(t *testing.T) {
	runKind(t, []kindCase{
		{`0.25`, `0,25`, false, verify.Correct},
		{`0.111`, `0,111`, false, verify.Correct},
		{`1000`, `1,000`, false, verify.Correct},
		{`1`, `1,000`, false, verify.Incorrect},
		{`1234`, `1,234`, false, verify.Correct},
		{`1.5`, `1,5`, false, verify.Correct},
		{`1, 5`, `1,5`, false, verify.Correct},
		{`12.5`, `12,5`, false, verify.Correct},
		{`7425000`, `7,425,000`, false, verify.Correct},
		{`1234.5`, `1.234,5`, false, verify.Correct},
		{`1234567.89`, `1.234.567,89`, false, verify.Correct},
		{`1.234`, `1.234`, false, verify.Correct},
		{`1234`, `1.234`, false, verify.Incorrect},
		{`1000`, `1 000`, false, verify.Correct},
		{`1000.5`, `1 000,5`, false, verify.Correct},
		{`2.74`, `Soucis : 2,74 $ a..`, false, verify.Correct},
		{`\gcd(830, 450)`, `10`, false, verify.Correct},
		{`830450`, `830,450`, false, verify.Correct},
	})
}

// Policy (doc.go, Percent, Degrees and units, Logarithms, Text): units and
// words after a value are dropped; % is optional and also a scale;
// degrees are numbers of degrees or radians, also inside expressions;
// \log without a base is log10; prose compares as text.
func TestKindUnitsPercentDegrees(t *testing.T) {
	runKind(t, []kindCase{
		{`5`, `5\text{ cm}`, false, verify.Correct},
		{`15`, `15\mbox{ cm}^2`, false, verify.Correct},
		{`17`, `17\text{ any text}`, false, verify.Correct},
		{`125`, `125 miles`, false, verify.Correct},
		{`28\%`, `28`, false, verify.Correct},
		{`28\%`, `0.28`, false, verify.Correct},
		{`0.28`, `28`, false, verify.Incorrect},
		{`28\%`, `28 percent`, false, verify.Correct},
		{`45^\circ`, `\frac{\pi}{4}`, false, verify.Correct},
		{`180 - 2\alpha`, `180^\circ - 2\alpha`, false, verify.Correct},
		{`\pi - 2\alpha`, `180^\circ - 2\alpha`, false, verify.Correct},
		{`2`, `\log 100`, false, verify.Correct},
		{`\ln 100`, `\log 100`, false, verify.Incorrect},
		{`3`, `\log_2 8`, false, verify.Correct},
		{`\text{Evelyn}`, `Evelyn`, false, verify.Correct},
		{`\text{Evelyn}`, `Eve`, false, verify.Incorrect},
		{`\text{odd}`, `5`, false, verify.Incorrect},
	})
}

// Policy (doc.go, Languages and markers): the final-answer forms that the
// field's harness prompts ask for are explicit marks in any case and with
// markdown emphasis: lighteval's and Inspect's "ANSWER: $ANSWER",
// simple-evals' (?i)Answer\s*:, lm-eval's minerva_math "Final Answer: The
// final answer is $X$. I hope it is correct.", gsm8k's "The answer is X" and
// "#### X", the \boxed{} of Qwen, DeepSeek and NeMo-Skills. Each is graded
// by rule final-answer-is (or its own marked rule), never by the
// last-number fallback that the strict policy does not count.
func TestHarnessAnswerMarkers(t *testing.T) {
	for _, tc := range []struct {
		name, gold, pred string
		want             verify.Status
		rule             string
	}{
		{"lighteval / Inspect capitals", `5`, "We add 2 and 3.\nANSWER: 5", verify.Correct, RuleFinalAnswer},
		{"capitals with math", `\frac{1}{2}`, "Halve it: 1 of 2.\n\nANSWER: $\\frac12$", verify.Correct, RuleFinalAnswer},
		{"capitals, wrong", `5`, "We add 2 and 4, giving 6 of 7 steps.\nANSWER: 6", verify.Incorrect, RuleFinalAnswer},
		{"simple-evals", `42`, "Count them: 40 and 2 more.\nAnswer: 42", verify.Correct, RuleFinalAnswer},
		{"simple-evals spaced colon", `42`, "Count them: 40 and 2 more.\nAnswer  : 42", verify.Correct, RuleFinalAnswer},
		{"lower case", `42`, "so it is 41 + 1 = 42.\nanswer: 42", verify.Correct, RuleFinalAnswer},
		{"bold label", `5`, "Adding 2 and 3 gives 5 of 9 balls.\n\n**Answer:** 5", verify.Correct, RuleFinalAnswer},
		{"bold label outside colon", `5`, "Adding 2 and 3 gives 5 of 9.\n\n**Answer**: 5", verify.Correct, RuleFinalAnswer},
		{"bold answer", `5`, "Adding 2 and 3 gives 5 of 9.\n\nAnswer: **5**", verify.Correct, RuleFinalAnswer},
		{"bold final answer", `7`, "So 3 + 4 = 7 in 10 tries.\n\n**Final Answer:** $7$", verify.Correct, RuleFinalAnswer},
		{"final answer", `7`, "So 3 + 4 = 7, leaving 10.\nFinal answer: 7", verify.Correct, RuleFinalAnswer},
		{"capital final answer", `7`, "So 3 + 4 = 7, leaving 10.\nFINAL ANSWER: 7", verify.Correct, RuleFinalAnswer},
		{"the answer is, capitals", `7`, "So 3 + 4 = 7, leaving 10.\nTHE ANSWER IS 7.", verify.Correct, RuleFinalAnswer},
		{"minerva_math", `\frac{3}{4}`, "Dividing, 3 by 4 of 12.\nFinal Answer: The final answer is $\\frac{3}{4}$. I hope it is correct.", verify.Correct, RuleFinalAnswer},
		{"gsm8k cot", `18`, "Janet sells 16 - 3 - 4 = 9 eggs at 2 dollars. The answer is 18.", verify.Correct, RuleFinalAnswer},
		{"gsm8k hashes", `18`, "9 * 2 = 18 of 30\n#### 18", verify.Correct, RuleHashes},
		{"qwen boxed", `18`, "9 * 2 = 18 of 30, so the answer is $\\boxed{18}$.", verify.Correct, RuleBoxed},
		{"lighteval old boxed", `18`, "Therefore, the final answer is: $\\boxed{18}$. I hope it is correct", verify.Correct, RuleBoxed},
	} {
		v := Check(tc.gold, tc.pred, Options{PredIsCompletion: true})
		if v.Status != tc.want || v.Rule != tc.rule || verify.IsFallbackRule(v.Rule) {
			t.Errorf("%s: %q: %s by rule %q (extracted %q: %s); want %s by %q",
				tc.name, tc.pred, v.Status, v.Rule, v.Extracted, v.Reason, tc.want, tc.rule)
		}
	}
}

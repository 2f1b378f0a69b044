package math

import (
	"context"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/verify"
)

// TestDecisions pins each rule documented in doc.go with hand-checked pairs.
func TestDecisions(t *testing.T) {
	tests := []struct {
		gold, pred string
		want       verify.Status
	}{
		{`\frac{1}{2004!}`, `\frac{1}{2006!}`, verify.Incorrect}, // exact, no rounding to 0
		{`\frac{1}{5120}`, `\frac{1}{28800}`, verify.Incorrect},
		{`\frac{1}{12}`, `0.0833333333`, verify.Correct}, // 10 significant digits
		{`\pi`, `3.14159`, verify.Incorrect},             // rounded answer to an exact question
		{`\sqrt{2}+\sqrt{3}`, `\sqrt{5+2\sqrt{6}}`, verify.Correct},
		{`10`, `9+1`, verify.Correct},
		{`x^2+2x+1`, `(x+1)^2`, verify.Correct},
		{`x^2+2x+1`, `(y+1)^2`, verify.Incorrect},
		{`50\%`, `0.5`, verify.Correct},
		{`0.5`, `50`, verify.Incorrect},
		{`45^\circ`, `\frac{\pi}{4}`, verify.Correct},
		{`-2, 1`, `1, -2`, verify.Correct},
		{`(1,3)`, `1,3`, verify.Correct},
		{`(3,1)`, `1,3`, verify.Incorrect},
		{`(0,1)`, `[0,1]`, verify.Incorrect},
		{`\pm 2`, `2`, verify.Incorrect},
		{`\pm 2`, `-2, 2`, verify.Correct},
		{`3`, `x = 3`, verify.Correct},
		{`11a+c`, `7 = 11a+c`, verify.Incorrect},
		{`2x+4y-3=0`, `y=-\frac{1}{2}x+\frac{3}{4}`, verify.Correct},
		{`(0, 12.5)`, `0 < x < 12.5`, verify.Correct},
		{`x > 5`, `x < 5`, verify.Incorrect},
		{`\begin{pmatrix}6&8\\10&12\end{pmatrix}`, `\begin{pmatrix}1&2\\3&4\end{pmatrix}+\begin{pmatrix}5&6\\7&8\end{pmatrix}`, verify.Correct},
		{`\text{Evelyn}`, `evelyn`, verify.Correct},
		{`(B)`, `B`, verify.Correct},
		{`1230`, `\fbox{1230}`, verify.Correct},
		{`2^{10}`, `1024`, verify.Correct},
		{`10^{100000}`, `10^{100001}`, verify.Unparseable}, // beyond exact arithmetic and float64: no verdict, not hung
		{`0.\overline{3}`, `\frac13`, verify.Correct},
		{`7,425,000`, `7425000`, verify.Correct},
		{`1, 2, 3`, `1, 2, 3, \ldots`, verify.Incorrect}, // an ellipsis is part of the answer
		{`\{1, 2\}`, `\{2, 1\}`, verify.Correct},
		{`\frac{1}{\sqrt n}`, `\sqrt{1/n}`, verify.Correct}, // positive sample points
		{`\begin{pmatrix}-2&1\\1.5&-0.5\end{pmatrix}`, `\begin{pmatrix}1&2\\3&4\end{pmatrix}^{-1}`, verify.Correct},
		{`-2`, `\det\begin{pmatrix}1&2\\3&4\end{pmatrix}`, verify.Correct},
		{`\begin{pmatrix}1&3\\2&4\end{pmatrix}`, `\begin{pmatrix}1&2\\3&4\end{pmatrix}^T`, verify.Correct},
		{`\sin^2 x`, `\frac{1-\cos 2x}{2}`, verify.Correct},
	}
	for _, tc := range tests {
		got := VerifyAnswer(tc.gold, tc.pred, false)
		if got.Status != tc.want {
			t.Errorf("gold %q pred %q: got %s (%s), want %s", tc.gold, tc.pred, got.Status, got.Reason, tc.want)
		}
	}
}

func TestExtractionRules(t *testing.T) {
	tests := []struct{ completion, answer, rule string }{
		{`so \boxed{12} is it`, "12", RuleBoxed},
		{`\boxed{255} ... Final Answer: The final answer is $10,455$. I hope it is correct.`, "$10,455$", RuleFinalAnswer},
		{"work\n#### 72", "72", RuleHashes},
		{"Scratch \\boxed{9}\nFinal: \\boxed{2} and \\boxed{3}", "2, 3", RuleBoxedJoined},
		{"first \\boxed{42}, then \\boxed{277}", "277", RuleBoxed},
		{"<think>\\boxed{5}</think> The answer follows.", "5", RuleBoxed},
		{"Final Answer: $24$. I hope it is correct.\n\nProblem:\nnext\n\nSolution: $99$", "$24$", RuleFinalAnswer},
		{"Thus the total is 1,000.99m² in all", "1,000.99", RuleLastNumber},
		{"#### Step 2.87: more work, then $x = 4$", "x = 4", RuleLastMath},
	}
	for _, tc := range tests {
		ex, ok := extractFromCompletion(tc.completion)
		if !ok || strings.TrimSpace(ex.answer) != tc.answer || ex.rule != tc.rule {
			t.Errorf("%q: got %q by %s (ok=%v), want %q by %s", tc.completion, ex.answer, ex.rule, ok, tc.answer, tc.rule)
		}
	}
}

func TestVerifierInterface(t *testing.T) {
	v := New()
	if v.Name() != "reach-math/1" {
		t.Errorf("name %q", v.Name())
	}
	ctx := context.Background()
	if got := v.Verify(ctx, verify.Problem{Reference: "C", Kind: "choice"}, "The answer is (C)."); !got.IsCorrect() {
		t.Errorf("choice: %+v", got)
	}
	if got := v.Verify(ctx, verify.Problem{Reference: `so $\boxed{4}$`}, "I get \\boxed{4}"); !got.IsCorrect() {
		t.Errorf("solution reference: %+v", got)
	}
	if got := v.Verify(ctx, verify.Problem{Reference: "4"}, "no digits at all"); got.Status != verify.Unparseable || got.Reason == "" {
		t.Errorf("no answer: %+v", got)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if got := v.Verify(cancelled, verify.Problem{Reference: "4"}, `\boxed{4}`); got.Status != verify.Unparseable {
		t.Errorf("cancelled context: %+v", got)
	}
	if got := v.Verify(ctx, verify.Problem{Reference: "4"}, strings.Repeat("(", 100000)+`\boxed{4}`); !got.IsCorrect() {
		t.Errorf("huge completion: %+v", got)
	}
}

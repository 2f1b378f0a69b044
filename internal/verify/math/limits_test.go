package math

import (
	"math/big"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/verify"
)

// limitNames are the caps a reason may name; every Unparseable verdict
// caused by a cap must name one.
var limitNames = []string{"maxAnswerLen", "maxTokens", "maxDepth", "maxElems", "maxRatBits",
	"maxCompletionTail", "maxBoxes", "maxVariants", "maxExactExponent", "maxSumTerms", "evalBudget",
	"maxCompareDepth"}

func namesLimit(reason string) bool {
	for _, n := range limitNames {
		if strings.Contains(reason, n) {
			return true
		}
	}
	return false
}

func digits(n int, seed byte) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '1' + (seed+byte(i*7))%9
	}
	return string(b)
}

// TestNoVerdictOnTruncatedAnswers: answers past a cap are never compared on
// a prefix. Before issue 16 a 2,049-digit N was "identical" to N+1.
func TestNoVerdictOnTruncatedAnswers(t *testing.T) {
	n := digits(2049, 3)
	n1 := new(big.Int)
	n1.SetString(n, 10)
	n1.Add(n1, big.NewInt(1))
	longTuple := func(last string) string {
		var b strings.Builder
		b.WriteString("(")
		for i := 0; i < 700; i++ {
			b.WriteString("1, ")
		}
		b.WriteString(last + ")")
		return b.String()
	}
	tests := []struct {
		name, gold, pred string
		completion       bool
		want             verify.Status
		limit            string
	}{
		{"N vs N+1", n, n1.String(), false, verify.Unparseable, "maxAnswerLen"},
		{"N vs N", n, n, false, verify.Correct, ""},
		{"N vs N written with spaces", n, strings.Join([]string{n[:1000], n[1000:]}, " "), false, verify.Correct, ""},
		{"long tuple, last element differs", longTuple("2"), longTuple("3"), false, verify.Unparseable, "maxAnswerLen"},
		{"long tuple, equal", longTuple("2"), longTuple("2"), false, verify.Correct, ""},
		{"boxed N+1 in a completion", n, "So the answer is \\boxed{" + n1.String() + "}.", true, verify.Unparseable, "maxAnswerLen"},
		{"boxed N in a completion", n, "So the answer is \\boxed{" + n + "}.", true, verify.Correct, ""},
		{"box cut by the search window", "5000", "\\boxed{" + strings.Repeat("1 + ", 20000) + "1 = 5000}", true, verify.Unparseable, "maxCompletionTail"},
		{"digits cut by the search window", digits(100, 1), "\\boxed{" + digits(70000, 1) + "}", true, verify.Unparseable, "maxCompletionTail"},
		{"too many tokens", "1", strings.Repeat("1+", 600) + "1", false, verify.Unparseable, "maxTokens"},
		{"nested too deep", "1", strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70), false, verify.Unparseable, "maxDepth"},
		{"too many ± readings", "1", `1 \pm 1 \pm 1 \pm 1 \pm 1 \pm 1`, false, verify.Unparseable, "maxVariants"},
		{"value beyond exact and float", "4^{50000}", "2^{100000}", false, verify.Unparseable, "maxExactExponent"},
		{"too many joined boxes", "1", strings.Repeat(`\boxed{1}, `, 20) + `\boxed{2}`, true, verify.Unparseable, "maxBoxes"},
	}
	for _, tc := range tests {
		v := Check(tc.gold, tc.pred, Options{PredIsCompletion: tc.completion})
		if v.Status != tc.want || tc.limit != "" && !strings.Contains(v.Reason, tc.limit) {
			t.Errorf("%s: got %s (%s), want %s naming %q", tc.name, v.Status, v.Reason, tc.want, tc.limit)
		}
	}
}

// FuzzLimits: an answer pushed past any size cap (length, tokens, nesting,
// elements, boxes, the completion window) is Unparseable with the cap
// named, or Correct only when it is identical to the reference; never
// Incorrect.
func FuzzLimits(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, uint8(0), uint16(0))
	}
	f.Add("1", uint8(3), uint16(500))
	f.Fuzz(func(t *testing.T, a string, how uint8, extra uint16) {
		if len(a) > 200 {
			a = a[:200]
		}
		// a is one element of an over-long answer: keep extraction markers
		// out of it, so the whole answer is what gets graded.
		for _, m := range []string{`\boxed`, `\fbox`, "nswer", "####", "<answer", "</think", "Problem:", "\n", "A:", "答案", "ponse", "espuesta", "ntwort", "Ответ", "isposta"} {
			a = strings.ReplaceAll(a, m, "x")
		}
		var pred string
		completion := false
		switch how % 6 {
		case 0: // longer than maxAnswerLen
			pred = a + " + " + strings.Repeat("1", maxAnswerLen+1+int(extra%4096))
		case 1: // more than maxTokens
			pred = strings.Repeat("x+", maxTokens/2+1+int(extra%512)) + a
		case 2: // deeper than maxDepth
			k := maxDepth + 1 + int(extra%64)
			pred = strings.Repeat("(", k) + a + strings.Repeat(")", k)
		case 3: // a long list, one element past maxElems
			pred = strings.Repeat("7, ", maxElems+1+int(extra%64)) + a
		case 4: // a boxed answer cut by the completion window
			pred = `\boxed{` + strings.Repeat("2", maxCompletionTail+int(extra)) + a + `}`
			completion = true
		case 5: // more joinable boxes than maxBoxes
			pred = strings.Repeat(`\boxed{1}, `, maxBoxes+int(extra%8)) + `\boxed{` + a + `}`
			completion = true
		}
		for _, gold := range []string{"1", a, pred} {
			if strings.TrimSpace(gold) == "" {
				continue
			}
			if _, isChoice := choiceLetter(cleanAnswer(normalizeText(gold)), 'J'); isChoice && how%6 == 5 {
				continue // a choice is the last box alone: joining does not apply
			}
			if how%6 >= 1 && how%6 <= 3 {
				// Parse and comparison caps apply when the reference is
				// mathematics; an option letter or prose is graded without them.
				if _, isChoice := choiceLetter(cleanAnswer(normalizeText(gold)), 'J'); isChoice {
					continue
				}
				if gp, err := parseAnswer(cleanAnswer(normalizeText(gold))); err != nil || gp.prose {
					continue
				}
			}
			v := check(gold, pred, Options{PredIsCompletion: completion})
			switch v.Status {
			case verify.Incorrect:
				t.Fatalf("case %d: past a cap but graded incorrect (%s); gold %.40q", how%6, v.Reason, gold)
			case verify.Unparseable:
				if !namesLimit(v.Reason) && v.Reason != "no final answer found" && v.Reason != "no option letter found" && v.Reason != "empty reference answer" && !strings.HasPrefix(v.Reason, "reference unreadable") {
					t.Fatalf("case %d: unparseable without naming a cap: %s", how%6, v.Reason)
				}
			case verify.Correct:
				if v.Reason != "identical to the reference" {
					t.Fatalf("case %d: past a cap but graded correct by comparison (%s); gold %.40q", how%6, v.Reason, gold)
				}
			}
		}
	})
}

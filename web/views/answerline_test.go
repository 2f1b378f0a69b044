package views

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// answerLineBefore is answerLine as it was written first (strings.LastIndex
// and strings.Count): the reference the faster scans must agree with.
func answerLineBefore(text, answer string) (before, line, after string, ok bool) {
	if strings.TrimSpace(answer) == "" {
		return "", "", "", false
	}
	at := strings.LastIndex(text, `\boxed{`+answer)
	if at < 0 {
		at = strings.LastIndex(text, answer)
	}
	if at < 0 {
		return "", "", "", false
	}
	start := strings.LastIndexByte(text[:at], '\n') + 1
	end := len(text)
	if i := strings.IndexByte(text[at:], '\n'); i >= 0 {
		end = at + i
	}
	before, line, after = text[:start], text[start:end], text[end:]
	balanced := func(s string) bool {
		return strings.Count(s, "$")%2 == 0 && strings.Count(s, `\[`) == strings.Count(s, `\]`) &&
			strings.Count(s, `\(`) == strings.Count(s, `\)`)
	}
	if !balanced(before) || !balanced(line) {
		return "", "", "", false
	}
	return before, line, after, true
}

func TestAnswerLine(t *testing.T) {
	for _, c := range []struct {
		text, answer        string
		before, line, after string
		ok                  bool
	}{
		{"so x = 2.\nThe answer is \\boxed{2}.\nDone", "2", "so x = 2.\n", "The answer is \\boxed{2}.", "\nDone", true},
		// The boxed one wins over a later bare one.
		{"\\boxed{5}\nthen 5 again", "5", "", "\\boxed{5}", "\nthen 5 again", true},
		// Without \boxed, the last line holding the answer.
		{"a 7\nb 7\nc", "7", "a 7\n", "b 7", "\nc", true},
		// Overlapping occurrences: the last start, as strings.LastIndex.
		{"aaa", "aa", "", "aaa", "", true},
		// An odd $ before the line: shown whole.
		{"cost $5\nanswer 5", "5", "", "", "", false},
		// An open \[ before the line.
		{"\\[ x\nanswer 3", "3", "", "", "", false},
		{"\\( x \\)\nanswer 3", "3", "\\( x \\)\n", "answer 3", "", true},
		// A trailing backslash is not a span.
		{"x\\\nanswer 3", "3", "x\\\n", "answer 3", "", true},
		{"no answer here", "42", "", "", "", false},
		{"anything", "  ", "", "", "", false},
	} {
		b, l, a, ok := answerLine(c.text, c.answer)
		if b != c.before || l != c.line || a != c.after || ok != c.ok {
			t.Errorf("answerLine(%q, %q) = %q, %q, %q, %v; want %q, %q, %q, %v", c.text, c.answer, b, l, a, ok, c.before, c.line, c.after, c.ok)
		}
	}
}

// TestAnswerLineAgrees checks the scans against the first version on
// texts built from pieces that stress them: answers that overlap, math
// openers and closers, backslashes at the ends.
func TestAnswerLineAgrees(t *testing.T) {
	pieces := []string{"1", "12", "\\boxed{", "\\boxed{1", "}", "$", "\\[", "\\]", "\\(", "\\)", "\\", "\n", "x", " "}
	answers := []string{"1", "12", "11", "\\", "}", "x 1"}
	seed := uint32(1)
	next := func(n int) int { seed = seed*1664525 + 1013904223; return int(seed>>8) % n }
	for range 20000 {
		var sb strings.Builder
		for range next(24) {
			sb.WriteString(pieces[next(len(pieces))])
		}
		text, answer := sb.String(), answers[next(len(answers))]
		b1, l1, a1, ok1 := answerLine(text, answer)
		b0, l0, a0, ok0 := answerLineBefore(text, answer)
		if b1 != b0 || l1 != l0 || a1 != a0 || ok1 != ok0 {
			t.Fatalf("answerLine(%q, %q) = %q, %q, %q, %v; the first version gives %q, %q, %q, %v", text, answer, b1, l1, a1, ok1, b0, l0, a0, ok0)
		}
	}
}

// BenchmarkAnswerLine: 32 real long-CoT completions the repository
// carries (a problem page's worth), each with its own extracted answer
// and with one it does not hold (two searches over the whole text), with
// the first version and now.
func BenchmarkAnswerLine(b *testing.B) {
	f, err := os.Open("../../internal/testfiles/data/generations/math500-qwen3-4b-base-greedy/long-cot-boxed__test_long-cot-boxed_-1_seed0_t0.0_s0_e-1.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var texts, answers []string
	dec := json.NewDecoder(f)
	for len(texts) < 32 {
		var rec struct {
			Code []string `json:"code"`
			Pred []string `json:"pred"`
		}
		if err := dec.Decode(&rec); err != nil {
			b.Fatal(err)
		}
		if len(rec.Code) > 0 && len(rec.Pred) > 0 {
			texts, answers = append(texts, rec.Code[0]), append(answers, rec.Pred[0])
		}
	}
	for _, f := range []struct {
		name string
		fn   func(string, string) (string, string, string, bool)
	}{{"before", answerLineBefore}, {"now", answerLine}} {
		b.Run(f.name+"/own answer", func(b *testing.B) {
			for b.Loop() {
				for i, t := range texts {
					f.fn(t, answers[i])
				}
			}
		})
		b.Run(f.name+"/absent answer", func(b *testing.B) {
			for b.Loop() {
				for _, t := range texts {
					f.fn(t, "\\frac{14}{3}x")
				}
			}
		})
	}
}

package views

import "strings"

// answerLine splits a completion around the line that gives its final
// answer: the last line holding the answer (with \boxed when there is
// one). ok is false when there is none, or when cutting there could split
// a math span for KaTeX (an odd number of $, or an open \[ or \( before
// the line): the text is then shown whole.
//
// It runs for every sample a problem page shows (32 texts of up to
// store.CompletionShown bytes), so its scans are forward and vectorised
// (strings.Index, strings.IndexByte) rather than strings.LastIndex's
// byte-at-a-time hash: a tenth of the problem page's CPU before.
func answerLine(text, answer string) (before, line, after string, ok bool) {
	if strings.TrimSpace(answer) == "" {
		return "", "", "", false
	}
	at := lastIndex(text, `\boxed{`+answer)
	if at < 0 {
		at = lastIndex(text, answer)
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
	if !mathBalanced(before) || !mathBalanced(line) {
		return "", "", "", false
	}
	return before, line, after, true
}

// lastIndex is strings.LastIndex(s, sub) for a non-empty sub, found by
// forward searches: each match is passed by one byte, so overlapping
// matches count as LastIndex's do.
func lastIndex(s, sub string) int {
	last := -1
	for from := 0; from <= len(s)-len(sub); {
		i := strings.Index(s[from:], sub)
		if i < 0 {
			break
		}
		last = from + i
		from = last + 1
	}
	return last
}

// mathBalanced reports whether s closes every math span it opens, as far
// as a cut after it goes: an even number of $, and as many \] as \[ and
// \) as \(.
func mathBalanced(s string) bool {
	if strings.Count(s, "$")%2 != 0 {
		return false
	}
	var open, close [2]int // \[ \], \( \)
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '\\')
		if j < 0 || i+j+1 >= len(s) {
			break
		}
		i += j + 1
		switch s[i] {
		case '[':
			open[0]++
		case ']':
			close[0]++
		case '(':
			open[1]++
		case ')':
			close[1]++
		}
	}
	return open == close
}

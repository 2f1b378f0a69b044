package math

import "strings"

// choiceLetter reads an answer that is a multiple-choice option: "C",
// "(C)", "\text{(C)}", "**C**", "C. x = 42", "C Cecile". maxLetter is the
// last allowed option letter ('E' for A-E).
func choiceLetter(s string, maxLetter byte) (byte, bool) {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 64; i++ {
		c := s[i]
		if c == '\\' {
			j := i + 1
			for j < len(s) && isLetter(s[j]) {
				j++
			}
			switch s[i+1 : j] {
			case "text", "textbf", "mathrm", "mathbf", "textit", "mbox", "boxed":
				i = j - 1
				continue
			}
			if j == i+1 {
				i++
				continue
			}
		}
		switch c {
		case '{', '}', '*', '$':
			continue
		}
		b.WriteByte(c)
	}
	t := strings.TrimSpace(b.String())
	t = strings.TrimLeft(t, "([ ")
	if t == "" {
		return 0, false
	}
	c := t[0]
	if c < 'A' || c > maxLetter {
		return 0, false
	}
	if len(t) == 1 {
		return c, true
	}
	n := t[1]
	if n >= 0x80 {
		return c, true // "B不是 A"
	}
	rest := t[1:]
	switch n {
	case ')', ']', '.', ':', ',':
		rest = rest[1:]
		if rest != "" && rest[0] != ' ' && rest[0] != '\n' {
			return 0, false // "A:B=1"
		}
	case ' ', '\n':
	default:
		return 0, false
	}
	rest = strings.TrimLeft(rest, " \n")
	if rest != "" && strings.IndexByte("=<>+-*/^_", rest[0]) >= 0 {
		return 0, false // "D = (0, 1)" is an equation
	}
	return c, true
}

// standaloneLetter finds the last option letter in s that is a word on its
// own (not part of a longer word or number).
func standaloneLetter(s string, maxLetter byte) (byte, bool) {
	c, _, ok := standaloneLetterAt(s, maxLetter)
	return c, ok
}

// standaloneLetterAt is standaloneLetter with the letter's offset.
func standaloneLetterAt(s string, maxLetter byte) (byte, int, bool) {
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if c < 'A' || c > maxLetter {
			continue
		}
		if i > 0 && (isLetter(s[i-1]) || isDigit(s[i-1]) || s[i-1] == '\\' || s[i-1] == '\'') {
			continue
		}
		if i+1 < len(s) && (isLetter(s[i+1]) || isDigit(s[i+1]) || s[i+1] == '\'') {
			continue
		}
		return c, i, true
	}
	return 0, 0, false
}

// extractChoice finds the chosen option in a completion: a boxed letter,
// the letter after "answer is"/"Answer:", a letter opening the text, or
// the last standalone letter.
func extractChoice(text string, maxLetter byte) (byte, string, bool) {
	c, rule, _, ok := extractChoiceAt(text, maxLetter)
	return c, rule, ok
}

// extractChoiceAt is extractChoice that also reports a limit error when the
// letter may come from an answer cut by the completion window.
func extractChoiceAt(text string, maxLetter byte) (byte, string, *limitError, bool) {
	s, guard := prepareCompletion(text)
	at := func(pos int) *limitError {
		if guard > 0 && pos < guard {
			return errWindow
		}
		return nil
	}
	if boxes := findBoxes(s); len(boxes) > 0 {
		b := boxes[len(boxes)-1]
		if c, ok := choiceLetter(s[b.cstart:b.cend], maxLetter); ok {
			return c, RuleBoxed, at(b.start), true
		}
	}
	if snip, pos := phraseAnswer(s); pos >= 0 {
		if c, ok := choiceLetter(snip, maxLetter); ok {
			return c, RuleFinalAnswer, at(pos), true
		}
		if c, ok := standaloneLetter(firstWords(snip, 6), maxLetter); ok {
			return c, RuleFinalAnswer, at(pos), true
		}
	}
	if c, ok := choiceLetter(strings.TrimSpace(s), maxLetter); ok {
		return c, RuleChoice, at(0), true
	}
	if c, i, ok := standaloneLetterAt(s, maxLetter); ok {
		return c, RuleChoice, at(i), true
	}
	return 0, "", nil, false
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}

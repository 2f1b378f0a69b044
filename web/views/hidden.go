package views

import (
	"unicode/utf8"

	"github.com/reach-lab/reach/internal/hidden"
)

// Visible is s with each hidden character shown as a marker (see
// internal/hidden), for places that take only text: attributes, <title>,
// <option>. Text in the page body uses Name.
func Visible(s string) string { return hidden.Visible(s) }

// namePart is a run of a name: plain text, or one hidden character.
type namePart struct {
	Text   string
	Hidden rune // 0 for plain text
}

// nameParts splits s into plain runs and hidden characters.
func nameParts(s string) []namePart {
	var out []namePart
	start := 0
	for i, r := range s {
		if !hidden.Is(r) {
			continue
		}
		if i > start {
			out = append(out, namePart{Text: s[start:i]})
		}
		out = append(out, namePart{Hidden: r})
		start = i + utf8.RuneLen(r)
	}
	if start < len(s) {
		out = append(out, namePart{Text: s[start:]})
	}
	return out
}

package views

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Hidden characters change how text around them reads without showing
// themselves: bidirectional overrides and isolates can make "gpt-4" print
// as another name and zero-width ones make two equal-looking names differ.
// Names, ids and labels come from users and model files, so pages show each
// such character as a visible marker, as code hosts do.

// hiddenName is the Unicode name shown in a marker's title.
var hiddenName = map[rune]string{
	0x200B: "ZERO WIDTH SPACE",
	0x200C: "ZERO WIDTH NON-JOINER",
	0x200D: "ZERO WIDTH JOINER",
	0x200E: "LEFT-TO-RIGHT MARK",
	0x200F: "RIGHT-TO-LEFT MARK",
	0x202A: "LEFT-TO-RIGHT EMBEDDING",
	0x202B: "RIGHT-TO-LEFT EMBEDDING",
	0x202C: "POP DIRECTIONAL FORMATTING",
	0x202D: "LEFT-TO-RIGHT OVERRIDE",
	0x202E: "RIGHT-TO-LEFT OVERRIDE",
	0x2060: "WORD JOINER",
	0x2066: "LEFT-TO-RIGHT ISOLATE",
	0x2067: "RIGHT-TO-LEFT ISOLATE",
	0x2068: "FIRST STRONG ISOLATE",
	0x2069: "POP DIRECTIONAL ISOLATE",
	0xFEFF: "ZERO WIDTH NO-BREAK SPACE",
}

// IsHidden reports whether r is a character pages mark instead of printing.
func IsHidden(r rune) bool { _, ok := hiddenName[r]; return ok }

// hasHidden reports whether s holds a hidden character.
func hasHidden(s string) bool { return strings.IndexFunc(s, IsHidden) >= 0 }

// marker is the visible stand-in for hidden character r: ⟨U+202E⟩.
func marker(r rune) string { return fmt.Sprintf("⟨U+%04X⟩", r) }

// Visible is s with each hidden character replaced by its marker, for
// places that take only text: attributes, <title>, <option>.
func Visible(s string) string {
	if !hasHidden(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if IsHidden(r) {
			b.WriteString(marker(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

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
		if !IsHidden(r) {
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

// hiddenTitle is a marker's tooltip.
func hiddenTitle(r rune) string {
	return fmt.Sprintf("hidden character U+%04X %s", r, hiddenName[r])
}

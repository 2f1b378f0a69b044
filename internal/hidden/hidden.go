// Package hidden finds the characters that change how text around them
// reads without showing themselves, and makes them visible. Bidirectional
// overrides, embeddings and isolates can make "gpt-4" print as another
// name, and zero-width characters make two equal-looking names differ.
// Names, ids and labels come from users and model files, so Reach shows
// each such character as a marker (⟨U+202E⟩), as code hosts do.
package hidden

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// names are the hidden characters, with their Unicode names for tooltips.
var names = map[rune]string{
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

// Is reports whether r is a hidden character.
func Is(r rune) bool { _, ok := names[r]; return ok }

// Has reports whether s holds a hidden character.
func Has(s string) bool { return strings.IndexFunc(s, Is) >= 0 }

// Marker is the visible stand-in for hidden character r: ⟨U+202E⟩.
func Marker(r rune) string { return fmt.Sprintf("⟨U+%04X⟩", r) }

// Title describes r for a tooltip: "hidden character U+202E RIGHT-TO-LEFT
// OVERRIDE".
func Title(r rune) string { return fmt.Sprintf("hidden character U+%04X %s", r, names[r]) }

// Visible is s with each hidden character replaced by its marker. Markers
// are plain characters, so it keeps JSON and script text valid.
func Visible(s string) string {
	if !Has(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if Is(r) {
			b.WriteString(Marker(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Terminal is s made safe to print to a terminal: hidden characters as by
// Visible, and control characters other than newline and tab (ESC starts
// the sequences that move the cursor, clear the screen or set the title)
// as markers too; bytes that are not UTF-8 become U+FFFD (a lone 0x9B is
// a control sequence to some terminals).
func Terminal(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return Is(r) || isControl(r) }) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if Is(r) || isControl(r) {
			b.WriteString(Marker(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isControl: C0 and C1 controls and DEL, but not newline or tab.
func isControl(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7F && r <= 0x9F)
}

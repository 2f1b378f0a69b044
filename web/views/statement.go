package views

import (
	"regexp"
	"strings"
)

// statementPart is a piece of a problem statement: prose (with math for
// KaTeX) or an Asymptote figure's source ([asy]…[/asy], as MATH and AIME
// statements carry), which the page folds away: dozens of lines of drawing
// code would push the completions below the fold.
type statementPart struct {
	Text string
	Asy  bool
}

var asyBlock = regexp.MustCompile(`(?s)\[asy\](.*?)\[/asy\]`)

// statementParts splits s into prose and [asy] blocks, in order. Line
// breaks of prose next to a block are dropped (the folded block is a line
// of its own; under pre-wrap they would be blank lines).
func statementParts(s string) []statementPart {
	var out []statementPart
	at := 0
	for _, m := range asyBlock.FindAllStringSubmatchIndex(s, -1) {
		if m[0] > at {
			out = append(out, statementPart{Text: s[at:m[0]]})
		}
		out = append(out, statementPart{Text: s[m[2]:m[3]], Asy: true})
		at = m[1]
	}
	if at < len(s) {
		out = append(out, statementPart{Text: s[at:]})
	}
	for i := range out {
		if out[i].Asy {
			continue
		}
		if i > 0 {
			out[i].Text = strings.TrimLeft(out[i].Text, "\r\n")
		}
		if i < len(out)-1 {
			out[i].Text = strings.TrimRight(out[i].Text, "\r\n")
		}
	}
	return out
}

// lineCount is the number of non-empty lines of an [asy] block.
func lineCount(s string) int {
	n := 0
	for l := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

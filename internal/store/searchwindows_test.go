package store

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// rareWindows picks the query's rarest windows of letters, digits and
// spaces, never overlapping, in the query's order, leaving out windows in
// more than a quarter of the texts when a rarer one is there; a text
// holding the query holds the pattern.
func TestRareWindows(t *testing.T) {
	var texts []string
	for i := range 100 {
		texts = append(texts, "the answer is "+strings.Repeat("x", i%7)+". check: 3 \\cdot 4 = 12.")
	}
	texts = append(texts, "so the answer 17 it is")
	ws := []Windows{CountWindows(texts)}
	if ws[0].Texts != 101 || ws[0].Counts["ans"] != 101 || ws[0].Counts["r 1"] != 1 || ws[0].Counts["t: "] != 0 {
		t.Fatalf("counts: %d texts, ans %d, r 1 %d, t: %d", ws[0].Texts, ws[0].Counts["ans"], ws[0].Counts["r 1"], ws[0].Counts["t: "])
	}
	for q, want := range map[string][]string{
		"answer 17":      {"r 17"},           // the word's windows are in every text
		"the answer is":  {"r i"},            // every window common: the rarest only
		"zebra crossing": {"zebra crossing"}, // none seen: one run of rare windows
		"a+b":            nil,                // no window
		"17":             nil,
	} {
		got := rareWindows(q, ws)
		if !slices.Equal(got, want) {
			t.Errorf("rareWindows(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestCandidateShare(t *testing.T) {
	var texts []string
	for i := range 100 {
		texts = append(texts, fmt.Sprintf("so the final answer is %d", i))
	}
	for i := range 100 {
		texts = append(texts, fmt.Sprintf("we get x = %d", i))
	}
	ws := []Windows{CountWindows(texts)}
	// Every window of the phrase is in half the texts: the rarest alone is asked for.
	if sh := CandidateShare("the final answer is", ws); sh < 0.49 || sh > 0.51 {
		t.Errorf("common phrase: share %v, want 0.5", sh)
	}
	// Windows in no sampled text: nothing estimated.
	if sh := CandidateShare("zqzqzq", ws); sh != 0 {
		t.Errorf("unseen windows: share %v, want 0", sh)
	}
	// Rare windows multiply: below the rarest's share.
	if sh := CandidateShare("answer is 17", ws); sh >= 0.01 {
		t.Errorf("answer is 17: share %v, want under 1 %%", sh)
	}
	if sh := CandidateShare("", ws); sh != 1 {
		t.Errorf("no window: share %v, want 1", sh)
	}
}

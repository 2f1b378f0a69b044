package sampling

import "testing"

// pickPromptTokens names the prompt's token among a position's
// alternatives by its text, walking back from the end, and gives up when
// two alternatives could be it (ScoreTokens then asks by token id).
func TestPickPromptTokens(t *testing.T) {
	full := "Q: Wait, no"
	pl := []map[string]promptLogprob{
		nil, // the first token has no entry
		{"11": {DecodedToken: " Wait"}, "12": {DecodedToken: " So"}},
		{"13": {DecodedToken: ","}, "14": {DecodedToken: "."}},
		{"15": {DecodedToken: " no"}, "16": {DecodedToken: " yes"}},
	}
	ids, ok := pickPromptTokens(pl, full)
	if !ok || ids[1] != "11" || ids[2] != "13" || ids[3] != "15" {
		t.Errorf("ids %v, %v; want 11 13 15", ids, ok)
	}
	// " no" and "o" both end the text: ambiguous.
	pl[3]["17"] = promptLogprob{DecodedToken: "o"}
	if _, ok := pickPromptTokens(pl, full); ok {
		t.Error("an ambiguous position was named")
	}
	// No alternative ends the text (a byte-level token): not named either.
	pl[3] = map[string]promptLogprob{"18": {DecodedToken: "\ufffd"}}
	if _, ok := pickPromptTokens(pl, full); ok {
		t.Error("a position without a match was named")
	}
}

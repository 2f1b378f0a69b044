package hidden

import "testing"

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"gpt-4":                 "gpt-4",
		"rl\u202Ezero":          "rl⟨U+202E⟩zero",
		"\u200Bp0\uFEFF":        "⟨U+200B⟩p0⟨U+FEFF⟩",
		"a\u2066b\u2069c\u200F": "a⟨U+2066⟩b⟨U+2069⟩c⟨U+200F⟩",
		"مرحبا":                 "مرحبا", // right-to-left text itself is not hidden
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
	for _, r := range []rune{0x200B, 0x200F, 0x202A, 0x202E, 0x2060, 0x2066, 0x2069, 0xFEFF} {
		if !Is(r) {
			t.Errorf("U+%04X is not hidden", r)
		}
	}
	if Is('a') || Is(0x2028) {
		t.Error("a visible character counts as hidden")
	}
}

func TestTerminal(t *testing.T) {
	for in, want := range map[string]string{
		"plain\tname\n":         "plain\tname\n",
		"gpt\u202E4":            "gpt⟨U+202E⟩4",
		"\x1b[2Jcleared":        "⟨U+001B⟩[2Jcleared",
		"bell\a and \r\u009b1m": "bell⟨U+0007⟩ and ⟨U+000D⟩⟨U+009B⟩1m",
		"raw \x9b byte":         "raw \uFFFD byte",
		"<b>html</b> 重新":        "<b>html</b> 重新",
	} {
		if got := Terminal(in); got != want {
			t.Errorf("Terminal(%q) = %q, want %q", in, got, want)
		}
	}
}

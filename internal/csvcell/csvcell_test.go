package csvcell

import "testing"

func TestSafe(t *testing.T) {
	for in, want := range map[string]string{
		"":                                  "",
		"rl":                                "rl",
		"test/algebra/1.json":               "test/algebra/1.json",
		`+HYPERLINK("http://evil.example")`: `'+HYPERLINK("http://evil.example")`,
		"=1+1":                              "'=1+1",
		"-2":                                "'-2",
		"@SUM(A1)":                          "'@SUM(A1)",
		"\tx":                               "'\tx",
		"\rx":                               "'\rx",
		"a=b":                               "a=b",
	} {
		if got := Safe(in); got != want {
			t.Errorf("Safe(%q) = %q, want %q", in, got, want)
		}
	}
}

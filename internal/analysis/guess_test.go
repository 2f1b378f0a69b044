package analysis

import "testing"

func TestGuessable(t *testing.T) {
	for _, tc := range []struct {
		ref, kind string
		rule      string
		chance    float64
	}{
		{"3", "math", "small-integer", 1.0 / 11},
		{"-1", "math", "small-integer", 1.0 / 11},
		{"10", "math", "small-integer", 1.0 / 11},
		{"0", "", "small-integer", 1.0 / 11},
		{"4.0", "math", "small-integer", 1.0 / 11},
		{`\boxed{7}`, "math", "small-integer", 1.0 / 11},
		{"$ 2 $", "math", "small-integer", 1.0 / 11},
		{"Janet sells 16 - 3 - 4 = 9 eggs.\n#### 9", "math", "small-integer", 1.0 / 11},
		{"11", "math", "", 0},
		{"52", "math", "", 0},
		{"#### 18", "math", "", 0},
		{"025", "math", "", 0},
		{`\frac{1}{2}`, "math", "", 0},
		{"0.5", "math", "", 0},
		{`\text{(C)}`, "math", "choice", 0.25},
		{"(E)", "math", "choice", 0.2},
		{"B", "choice", "choice", 0.25},
		{"G", "choice", "choice", 1.0 / 7},
		{"C", "math", "choice", 0.25},
		{"x", "math", "", 0},
		{"G", "math", "", 0},
		{`\text{Yes}`, "math", "yes-no", 0.5},
		{"false", "math", "yes-no", 0.5},
		{`\text{Evelyn}`, "math", "", 0},
	} {
		g := Guessable(tc.ref, tc.kind)
		if tc.rule == "" {
			if g != nil {
				t.Errorf("Guessable(%q, %q) = %+v, want nil", tc.ref, tc.kind, *g)
			}
			continue
		}
		if g == nil || g.Rule != tc.rule || g.Chance != tc.chance {
			t.Errorf("Guessable(%q, %q) = %+v, want %s %.4f", tc.ref, tc.kind, g, tc.rule, tc.chance)
		}
	}
}

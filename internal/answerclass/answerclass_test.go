package answerclass

import (
	"fmt"
	"slices"
	"testing"
)

func texts(c Class) []string {
	var out []string
	for _, m := range c.Members {
		out = append(out, m.Text)
	}
	return out
}

func TestGroupByEquivalence(t *testing.T) {
	in := []Answer{
		{Text: "0.5", N: []int{3, 1}},
		{Text: `\frac{1}{2}`, N: []int{1, 4}, Correct: 5},
		{Text: "1/2", N: []int{0, 2}, Correct: 2},
		{Text: "3", N: []int{2, 0}},
		{Text: "3.0", N: []int{1, 0}},
		{Text: "", N: []int{4, 1}},
		{Text: "1 / 2", N: []int{1, 0}}, // equal to "1/2" but for spaces
		{Text: "7", N: []int{0, 1}},
	}
	got, complete := Group(in, 2, MathEquiv)
	if !complete {
		t.Error("eight answers ran out of equivalence checks")
	}
	if len(got) != 4 {
		t.Fatalf("%d classes: %+v; want 4 (1/2, no answer, 3, 7)", len(got), got)
	}
	half := got[0]
	if !slices.Equal(texts(half), []string{`\frac{1}{2}`, "1/2", "0.5", "1 / 2"}) {
		t.Errorf("correct class spellings %q", texts(half))
	}
	if !slices.Equal(half.N, []int{5, 7}) || half.Total != 12 || half.Correct != 7 {
		t.Errorf("correct class N %v total %d correct %d; want [5 7], 12, 7", half.N, half.Total, half.Correct)
	}
	if got[1].Text() != "" || got[1].Total != 5 {
		t.Errorf("class 2 %q (%d samples); want no answer (5)", got[1].Text(), got[1].Total)
	}
	if !slices.Equal(texts(got[2]), []string{"3", "3.0"}) || !slices.Equal(got[2].N, []int{3, 0}) || got[2].Correct != 0 {
		t.Errorf("class 3 %q N %v", texts(got[2]), got[2].N)
	}
	if !slices.Equal(texts(got[3]), []string{"7"}) {
		t.Errorf("class 4 %q", texts(got[3]))
	}
	// Without an equivalence only white space is ignored.
	plain, _ := Group(in, 2, nil)
	if len(plain) != 6 || !slices.Equal(texts(plain[0]), []string{`\frac{1}{2}`, "1/2", "1 / 2"}) {
		t.Errorf("without equivalence: %d classes, first %q", len(plain), texts(plain[0]))
	}
	// Two wrong answers that are each other's equivalent but not the
	// reference's stay apart from the correct class.
	wrong, _ := Group([]Answer{{Text: "2", N: []int{1}, Correct: 1}, {Text: "1/3", N: []int{2}}, {Text: "0.3333333333", N: []int{1}}}, 1, MathEquiv)
	if len(wrong) != 2 || !slices.Equal(texts(wrong[0]), []string{"2"}) {
		t.Errorf("classes %+v; want the correct 2 alone first", wrong)
	}
	if c, _ := Group(nil, 2, MathEquiv); c != nil {
		t.Error("no answers gave classes")
	}
}

// Past MaxChecks equivalence checks, the rarer answers are compared by
// text only, and Group says so.
func TestGroupCapsEquivalenceChecks(t *testing.T) {
	var in []Answer
	for i := range 500 {
		in = append(in, Answer{Text: fmt.Sprint(i), N: []int{1000 - i}})
	}
	in = append(in, Answer{Text: "0.0", N: []int{1}}) // equivalent to "0", but rare
	calls := 0
	got, complete := Group(in, 1, func(a, b string) bool { calls++; return MathEquiv(a, b) })
	if len(got) != 501 || complete {
		t.Errorf("%d classes, complete %v; want 501 (the rare 0.0 not compared), false", len(got), complete)
	}
	if calls != MaxChecks {
		t.Errorf("%d equivalence checks; want %d", calls, MaxChecks)
	}
}

// The problem page groups a problem's answers on every request: the
// worst case is many distinct wrong answers, none equivalent.
func BenchmarkGroupWorstCase(b *testing.B) {
	var in []Answer
	for i := range 200 {
		in = append(in, Answer{Text: fmt.Sprintf(`\frac{%d}{%d}`, i+1, 2*i+3), N: []int{300 - i, i}})
	}
	for b.Loop() {
		Group(in, 2, MathEquiv)
	}
}

func BenchmarkGroupTypical(b *testing.B) {
	in := []Answer{{Text: `\frac{1}{2}`, N: []int{60, 100}, Correct: 160}, {Text: "0.5", N: []int{20, 10}, Correct: 30},
		{Text: "1/3", N: []int{20, 5}}, {Text: "2", N: []int{10, 1}}, {Text: "", N: []int{18, 12}}, {Text: "x=2", N: []int{1, 0}}}
	for b.Loop() {
		Group(in, 2, MathEquiv)
	}
}

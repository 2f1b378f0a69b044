package views

import "testing"

func TestStatementParts(t *testing.T) {
	s := "In the diagram, $PQ$ is tangent. [asy]\nsize(200);\ndraw(A--B);\n[/asy]\n\nWhat is $x$? [asy]dot(P);[/asy]"
	got := statementParts(s)
	want := []statementPart{
		{Text: "In the diagram, $PQ$ is tangent. "},
		{Text: "\nsize(200);\ndraw(A--B);\n", Asy: true},
		{Text: "What is $x$? "},
		{Text: "dot(P);", Asy: true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d parts %+v, want %+v", len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("part %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if n := lineCount(want[1].Text); n != 2 {
		t.Errorf("lineCount = %d, want 2", n)
	}
	// No figure, or an unclosed one: the statement stays whole.
	for _, s := range []string{"What is $1+1$?", "Broken [asy] draw(A--B);"} {
		if p := statementParts(s); len(p) != 1 || p[0].Asy || p[0].Text != s {
			t.Errorf("statementParts(%q) = %+v", s, p)
		}
	}
}

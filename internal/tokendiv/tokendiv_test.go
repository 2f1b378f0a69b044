package tokendiv

import (
	"math"
	"testing"
)

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-6 {
		t.Errorf("%s = %.9f, want %.9f", what, got, want)
	}
}

func TestJSByHand(t *testing.T) {
	// P = (1, rest 0), Q = (0.5, rest 0.5), M = (0.75, 0.25):
	// KL(P‖M) = log2(4/3) = 0.415037; KL(Q‖M) = 0.5·log2(2/3) + 0.5·log2(2) = 0.207519;
	// JS = (0.415037 + 0.207519) / 2 = 0.311278.
	js, ok := JS([]Alt{{"a", 0}}, []Alt{{"a", math.Log(0.5)}})
	if !ok {
		t.Fatal("not ok")
	}
	near(t, "JS", js, (math.Log2(4.0/3)+0.5*math.Log2(2.0/3)+0.5)/2)
	near(t, "JS rounded", math.Round(js*1e6)/1e6, 0.311278)
	// Tokens known under one model only go to the rest: common {a} with
	// 0.5 each, rest 0.5 each: identical, 0.
	js, ok = JS([]Alt{{"a", math.Log(0.5)}, {"b", math.Log(0.25)}}, []Alt{{"a", math.Log(0.5)}, {"c", math.Log(0.25)}})
	if !ok || js != 0 {
		t.Errorf("JS = %v, %v; want 0, true", js, ok)
	}
	// Two common tokens: P = (0.5, 0.5, 0), Q = (0.25, 0.25, 0.5).
	// M = (0.375, 0.375, 0.25). KL(P‖M) = log2(4/3) = 0.415037;
	// KL(Q‖M) = 0.5·log2(2/3) + 0.5·log2(2) = 0.207519: JS 0.311278 again.
	js, _ = JS([]Alt{{"a", math.Log(0.5)}, {"b", math.Log(0.5)}}, []Alt{{"b", math.Log(0.25)}, {"a", math.Log(0.25)}})
	near(t, "JS two common", js, 0.311278)
	// Disjoint lists: nothing to compare.
	if _, ok := JS([]Alt{{"a", -1}}, []Alt{{"b", -1}}); ok {
		t.Error("disjoint lists compared")
	}
	// Completely different known masses: P = (1, 0), Q = (0, 1) gives 1 bit.
	js, _ = JS([]Alt{{"a", 0}}, []Alt{{"a", math.Inf(-1)}})
	near(t, "JS max", js, 1)
}

func TestCompareCriticalShare(t *testing.T) {
	base := Scored{Tokens: []string{"Wait", ",", " x"}, Logprobs: []float64{-3, -0.5, -0.2},
		Top: [][]Alt{{{"Wait", -3}}, nil, {{" x", -0.2}}}}
	rl := Scored{Tokens: []string{"Wait", ",", " x"}, Logprobs: []float64{-0.5, -0.5, -1.2},
		Top: [][]Alt{{{"Wait", -0.5}}, {{",", -0.5}}, {{" x", -1.2}}}}
	ps, ok := Compare(base, rl)
	if !ok || len(ps) != 3 {
		t.Fatalf("Compare: %v %v", ps, ok)
	}
	near(t, "delta 0", ps[0].Delta, 2.5)
	near(t, "delta 2", ps[2].Delta, -1)
	if !ps[0].HasJS || ps[1].HasJS {
		t.Errorf("HasJS = %v, %v; want true, false (no base alternatives at 1)", ps[0].HasJS, ps[1].HasJS)
	}
	c := Critical(ps, 2)
	if len(c) != 2 || c[0].Index != 0 || c[1].Index != 2 {
		t.Errorf("Critical = %+v, want positions 0 then 2", c)
	}
	near(t, "share", Share(ps, DefaultThreshold), 2.0/3)
	near(t, "share 1.5", Share(ps, 1.5), 1.0/3)
	// exp(−(−3 −0.5 −0.2)/3) and exp(−(−0.5 −0.5 −1.2)/3)
	near(t, "ppl base", Perplexity(base.Logprobs), math.Exp(3.7/3))
	near(t, "ppl rl", Perplexity(rl.Logprobs), math.Exp(2.2/3))
	rl.Tokens = []string{"Wait", ";", " x"}
	if _, ok := Compare(base, rl); ok {
		t.Error("different tokenizations compared")
	}
}

func pos(toks []string, deltas []float64) []Position {
	ps := make([]Position, len(toks))
	for i := range toks {
		ps[i] = Position{Index: i, Token: toks[i], Delta: deltas[i]}
	}
	return ps
}

func TestSummarizeByHand(t *testing.T) {
	s := []Sample{
		{Correct: true, Positions: pos([]string{"Wait", " ", "x"}, []float64{1.0, 0, -0.05})},
		{Correct: false, Positions: pos([]string{"Step", " Wait"}, []float64{0.3, -2})},
	}
	a := Summarize(s, DefaultThreshold, 1, 10)
	// Above ln 2: 1.0 and −2, 2 of 5 positions.
	near(t, "share", a.Share, 0.4)
	near(t, "correct share", a.Correct.Share, 1.0/3)
	near(t, "incorrect share", a.Incorrect.Share, 0.5)
	near(t, "correct mean |Δ|", a.Correct.MeanAbsDelta, 0.35)
	near(t, "incorrect mean |Δ|", a.Incorrect.MeanAbsDelta, 1.15)
	if a.Samples != 2 || a.Positions != 5 || a.Correct.Samples != 1 {
		t.Errorf("counts %d %d %d", a.Samples, a.Positions, a.Correct.Samples)
	}
	// Bins [0,.01) [.01,.1) [.1,.25) [.25,.5) [.5,1) [1,2) [2,4) [4,∞):
	// 0 → 0, 0.05 → 1, 0.3 → 3, 1.0 → 5, 2 → 6.
	want := []int{1, 1, 0, 1, 0, 1, 1, 0}
	for i, b := range a.Hist {
		if b.Count != want[i] {
			t.Errorf("bin %d [%v, %v) = %d, want %d", i, b.From, b.To, b.Count, want[i])
		}
	}
	// One critical position each: "Wait" and " Wait" (trimmed alike).
	if len(a.Frequent) != 1 || a.Frequent[0] != (TokenCount{"Wait", 2}) {
		t.Errorf("Frequent = %v, want [Wait 2]", a.Frequent)
	}
	// Two per sample, but only above ln 2: "x" (0.05) and "Step" (0.3) are not critical.
	a = Summarize(s, DefaultThreshold, 2, 10)
	if len(a.Frequent) != 1 || a.Frequent[0] != (TokenCount{"Wait", 2}) {
		t.Errorf("Frequent = %v, want [Wait 2]", a.Frequent)
	}
	// With a threshold of 0.01 all four count: Wait 2, then Step and x once (by text).
	a = Summarize(s, 0.01, 2, 10)
	if len(a.Frequent) != 3 || a.Frequent[0] != (TokenCount{"Wait", 2}) || a.Frequent[1] != (TokenCount{"Step", 1}) || a.Frequent[2] != (TokenCount{"x", 1}) {
		t.Errorf("Frequent = %v, want [Wait 2, Step 1, x 1]", a.Frequent)
	}
}

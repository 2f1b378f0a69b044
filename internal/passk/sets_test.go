package passk

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestSolved(t *testing.T) {
	base := []Count{{8, 0}, {8, 3}, {8, 1}, {8, 0}, {8, 8}}
	other := []Count{{8, 2}, {8, 0}, {8, 5}, {8, 0}, {8, 1}}
	s, err := Solved(base, other)
	if err != nil {
		t.Fatal(err)
	}
	want := SolvedSets{Both: 2, BaseOnly: 1, OtherOnly: 1, Neither: 1,
		BothProblems: []int{2, 4}, BaseOnlyProblems: []int{1}, OtherOnlyProblems: []int{0}, NeitherProblems: []int{3}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
	if _, err := Solved(base, other[:2]); !errors.Is(err, ErrInput) {
		t.Errorf("length mismatch: %v", err)
	}
}

func TestIntersectionsFourModels(t *testing.T) {
	// Problems (columns) solved by models (rows): hand-counted exclusive groups.
	//   p0: {0,1,2,3}  p1: {0}  p2: {}  p3: {0,1,2,3}  p4: {1,3}  p5: {0}  p6: {1,3}  p7: {0,1,2,3}
	solved := [][]bool{
		{true, true, false, true, false, true, false, true},
		{true, false, false, true, true, false, true, true},
		{true, false, false, true, false, false, false, true},
		{true, false, false, true, true, false, true, true},
	}
	models := make([][]Count, len(solved))
	for m, row := range solved {
		for _, s := range row {
			c := 0
			if s {
				c = 3
			}
			models[m] = append(models[m], Count{10, c})
		}
	}
	got, err := Intersections(models)
	if err != nil {
		t.Fatal(err)
	}
	want := []Intersection{
		{Members: []int{0, 1, 2, 3}, Problems: []int{0, 3, 7}},
		{Members: []int{0}, Problems: []int{1, 5}},
		{Members: []int{1, 3}, Problems: []int{4, 6}},
		{Members: []int{}, Problems: []int{2}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if _, err := Intersections([][]Count{{{1, 0}}, {}}); !errors.Is(err, ErrInput) {
		t.Errorf("ragged: %v", err)
	}
}

func TestHistogram(t *testing.T) {
	counts := []Count{{10, 0}, {10, 0}, {10, 1}, {10, 3}, {10, 5}, {10, 9}, {10, 10}, {3, 1}, {3, 2}}
	bins, err := Histogram(counts, 5)
	if err != nil {
		t.Fatal(err)
	}
	// c/n: 0, 0, .1, .3, .5, .9, 1, 1/3, 2/3 with bars 0 | (0,.2) [.2,.4) [.4,.6) [.6,.8) [.8,1) | 1
	want := []Bin{
		{"0", 0, 0, 2},
		{"(0, 0.2)", 0, 0.2, 1},
		{"[0.2, 0.4)", 0.2, 0.4, 2},
		{"[0.4, 0.6)", 0.4, 0.6, 1},
		{"[0.6, 0.8)", 0.6, 0.8, 1},
		{"[0.8, 1)", 0.8, 1, 1},
		{"1", 1, 1, 1},
	}
	if len(bins) != len(want) {
		t.Fatalf("got %d bars, want %d: %+v", len(bins), len(want), bins)
	}
	for i := range want {
		if bins[i].Label != want[i].Label || bins[i].Count != want[i].Count ||
			math.Abs(bins[i].Lo-want[i].Lo) > 1e-15 || math.Abs(bins[i].Hi-want[i].Hi) > 1e-15 {
			t.Errorf("bar %d = %+v, want %+v", i, bins[i], want[i])
		}
	}
	// Boundary: 3/10 with 10 bins belongs to [0.3, 0.4), 7/10 to [0.7, 0.8).
	b10, err := Histogram([]Count{{10, 3}, {10, 7}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if b10[4].Label != "[0.3, 0.4)" || b10[4].Count != 1 || b10[8].Label != "[0.7, 0.8)" || b10[8].Count != 1 {
		t.Errorf("boundary bars: %+v", b10)
	}
	if _, err := Histogram(counts, 0); !errors.Is(err, ErrInput) {
		t.Errorf("bins = 0: %v", err)
	}
}

func TestCover(t *testing.T) {
	counts := []Count{{10, 0}, {10, 3}, {10, 5}, {10, 10}}
	got, err := CoverCurve(counts, []float64{0, 0.3, 0.31, 0.5, 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 0.75, 0.5, 0.5, 0.25}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cover curve %v, want %v", got, want)
	}
	if _, err := CoverAt(counts, 1.5); !errors.Is(err, ErrInput) {
		t.Errorf("tau > 1: %v", err)
	}
}

func TestSolvedAtEqualBudget(t *testing.T) {
	// Problem 0: base 1 of 8 correct, other 0 of 2. At m = 2 base solves it with
	// pass@2(8, 1) = 1 - C(7,2)/C(8,2) = 1 - 21/28 = 1/4: base-only 1/4, neither 3/4.
	// Problem 1: equal n = 4, both solve it: both 1.
	// Problem 2: base 2/2, other 3/6: base 1, other pass@2(6,3) = 1 - C(3,2)/C(6,2) = 1 - 3/15 = 4/5.
	got, err := SolvedAtEqualBudget([]Count{{8, 1}, {4, 1}, {2, 2}}, []Count{{2, 0}, {4, 4}, {6, 3}})
	if err != nil {
		t.Fatal(err)
	}
	want := SolvedExpected{Both: 1 + 0.8, BaseOnly: 0.25 + 0.2, OtherOnly: 0, Neither: 0.75}
	for _, d := range []float64{got.Both - want.Both, got.BaseOnly - want.BaseOnly, got.OtherOnly - want.OtherOnly, got.Neither - want.Neither} {
		if math.Abs(d) > 1e-12 {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	}
	// Equal budgets everywhere: the plain solved sets.
	b, o := []Count{{4, 0}, {4, 2}, {4, 1}}, []Count{{4, 1}, {4, 0}, {4, 4}}
	e, _ := SolvedAtEqualBudget(b, o)
	s, _ := Solved(b, o)
	if e != (SolvedExpected{float64(s.Both), float64(s.BaseOnly), float64(s.OtherOnly), float64(s.Neither)}) {
		t.Errorf("equal budgets: %+v vs %+v", e, s)
	}
	if _, err := SolvedAtEqualBudget(b, o[:2]); !errors.Is(err, ErrInput) {
		t.Errorf("ragged: %v", err)
	}
}

package training

import (
	"reflect"
	"testing"
)

// Four problems over base → 100 → 200 → 300, by hand:
//
//	p0: 1 1 1 1  always solved
//	p1: 1 0 0 1  lost at 100, regained at 300
//	p2: 0 1 0 1  gained at 100, lost at 200, regained at 300
//	p3: 0 0 1 0  gained at 200, lost at 300
func TestFlows(t *testing.T) {
	base := []bool{true, true, false, false}
	series := [][]bool{base, {true, false, true, false}, {true, false, false, true}, {true, true, true, false}}
	got, err := Flows(base, series)
	if err != nil {
		t.Fatal(err)
	}
	e := []int{}
	want := []Flow{
		{Gained: e, Lost: e, Regained: e, GainedVsBase: e, LostVsBase: e},
		{Gained: []int{2}, Lost: []int{1}, Regained: e, GainedVsBase: []int{2}, LostVsBase: []int{1}},
		{Gained: []int{3}, Lost: []int{2}, Regained: e, GainedVsBase: []int{3}, LostVsBase: []int{1}},
		// p1 was solved by the base (before the previous point 200): regained; so was p2 (at 100).
		{Gained: []int{1, 2}, Lost: []int{3}, Regained: []int{1, 2}, GainedVsBase: []int{2}, LostVsBase: e},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Flows =\n%+v\nwant\n%+v", got, want)
	}
	if _, err := Flows(base, [][]bool{{true}}); err == nil {
		t.Error("different lengths accepted")
	}
}

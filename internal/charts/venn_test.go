package charts

import (
	"encoding/json"
	"math"
	"testing"
)

func TestLensArea(t *testing.T) {
	// Two unit circles one radius apart: 2π/3 − √3/2 (two 120° segments).
	if got, want := lensArea(1, 1, 1), 2*math.Pi/3-math.Sqrt(3)/2; math.Abs(got-want) > 1e-12 {
		t.Errorf("lensArea(1,1,1) = %v, want %v", got, want)
	}
	if got := lensArea(2, 1, 0.5); math.Abs(got-math.Pi) > 1e-12 {
		t.Errorf("contained: %v, want π", got)
	}
	if got := lensArea(1, 1, 2); got != 0 {
		t.Errorf("tangent: %v, want 0", got)
	}
}

// The solved distance gives the requested overlap, and the polygon drawn for it has that area,
// within 1% of the smaller circle's area, across sizes and overlaps.
func TestVennOverlapMatchesCounts(t *testing.T) {
	cases := []struct{ both, aOnly, bOnly int }{
		{462, 19, 3}, {26, 2, 1}, {71, 11, 0 + 11}, {50, 50, 50}, {1, 100, 100}, {100, 1, 300}, {5, 500, 2},
	}
	for _, c := range cases {
		xa, ra, xb, rb := vennCircles(c.both, c.aOnly, c.bOnly)
		if got, want := math.Pi*ra*ra, float64(c.both+c.aOnly); math.Abs(got-want) > 1e-9 {
			t.Errorf("%v: |A| area %v, want %v", c, got, want)
		}
		got := lensArea(ra, rb, xb-xa)
		if math.Abs(got-float64(c.both)) > 1e-6*float64(c.both) {
			t.Errorf("%v: overlap %v, want %d", c, got, c.both)
		}
		g := vennLayoutPx(c.both, c.aOnly, c.bOnly, 360)
		poly := lensPolygon(g.xa, g.ra, g.xb, g.rb, g.cy, 64)
		if poly == nil {
			t.Fatalf("%v: circles do not cross", c)
		}
		smaller := math.Pi * math.Pow(math.Min(g.ra, g.rb), 2)
		wantRatio := float64(c.both) / float64(c.both+min(c.aOnly, c.bOnly))
		if r := polygonArea(poly) / smaller; math.Abs(r-wantRatio) > 0.01 {
			t.Errorf("%v: drawn lens is %.4f of the smaller circle, want %.4f", c, r, wantRatio)
		}
		if g.xa-g.ra < 0 || g.xb+g.rb > g.frameW || g.cy-math.Max(g.ra, g.rb) < 40 || g.cy+math.Max(g.ra, g.rb) > g.frameH-30 {
			t.Errorf("%v: circles leave the frame: %+v", c, g)
		}
	}
}

func TestVennDegenerate(t *testing.T) {
	elements := func(in VennInput) map[string]int {
		t.Helper()
		in.A, in.B = "a", "b"
		s, err := Venn("d", in)
		if err != nil {
			t.Fatal(err)
		}
		var o map[string]any
		if err := json.Unmarshal(s.Option, &o); err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, e := range dig(t, o, "graphic", 0, "children").([]any) {
			n[e.(map[string]any)["type"].(string)]++
		}
		return n
	}
	// Disjoint: two fills and two outlines, no lens, and a visible gap.
	if n := elements(VennInput{AOnly: 30, BOnly: 12, Neither: 5}); n["polygon"] != 0 || n["circle"] != 4 {
		t.Errorf("disjoint: %v", n)
	}
	xa, ra, xb, rb := vennCircles(0, 30, 12)
	if xb-xa <= ra+rb {
		t.Errorf("disjoint circles touch: d=%v, ra+rb=%v", xb-xa, ra+rb)
	}
	// B inside A: the inner circle is drawn again as the lens, internally tangent.
	if n := elements(VennInput{Both: 40, AOnly: 60}); n["polygon"] != 0 || n["circle"] != 5 {
		t.Errorf("contained: %v", n)
	}
	xa, ra, xb, rb = vennCircles(40, 60, 0)
	if d := xb - xa; math.Abs(d-(ra-rb)) > 1e-9 {
		t.Errorf("contained: d = %v, want ra−rb = %v", d, ra-rb)
	}
	// Identical sets: concentric equal circles.
	if xa, _, xb, _ := vennCircles(50, 0, 0); xa != xb {
		t.Errorf("identical sets: centres %v and %v", xa, xb)
	}
	// One set empty: only the other circle (fill + outline).
	if n := elements(VennInput{BOnly: 20, Neither: 5}); n["circle"] != 2 || n["polygon"] != 0 {
		t.Errorf("A empty: %v", n)
	}
	// Both empty: only the frame and the texts.
	if n := elements(VennInput{Neither: 7}); n["circle"] != 0 || n["rect"] != 1 {
		t.Errorf("both empty: %v", n)
	}
}

func TestVennLabelsOutsideThinRegions(t *testing.T) {
	g := vennLayoutPx(462, 19, 3, 360)
	ls := g.labels(462, 19, 3)
	if len(ls) != 3 {
		t.Fatalf("labels = %+v", ls)
	}
	for _, l := range ls {
		switch l.region {
		case RegionAOnly:
			if l.x >= g.xa-g.ra || l.align != "right" {
				t.Errorf("thin A-only label inside the circle: %+v (A's left edge %v)", l, g.xa-g.ra)
			}
		case RegionBOnly:
			if l.x <= g.xb+g.rb || l.align != "left" {
				t.Errorf("thin B-only label inside the circle: %+v", l)
			}
		case RegionBoth:
			if l.x < g.xb-g.rb || l.x > g.xa+g.ra {
				t.Errorf("lens label outside the lens: %+v", l)
			}
		}
	}
	// A roomy region keeps its label inside, at its middle.
	g = vennLayoutPx(30, 70, 30, 360)
	for _, l := range g.labels(30, 70, 30) {
		if l.region == RegionAOnly && (l.x <= g.xa-g.ra || l.x >= g.xb-g.rb) {
			t.Errorf("A-only label %+v not between %v and %v", l, g.xa-g.ra, g.xb-g.rb)
		}
	}
}

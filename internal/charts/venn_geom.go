package charts

import (
	"math"
)

// lensArea is the area of the intersection of two circles with radii r1, r2 whose centres are
// d apart (the circular-segment formula, e.g. Weisstein, "Circle-Circle Intersection",
// MathWorld, eq. 14).
func lensArea(r1, r2, d float64) float64 {
	if d >= r1+r2 {
		return 0
	}
	if d <= math.Abs(r1-r2) {
		r := math.Min(r1, r2)
		return math.Pi * r * r
	}
	a1 := math.Acos(clamp((d*d+r1*r1-r2*r2)/(2*d*r1), -1, 1))
	a2 := math.Acos(clamp((d*d+r2*r2-r1*r1)/(2*d*r2), -1, 1))
	k := (-d + r1 + r2) * (d + r1 - r2) * (d - r1 + r2) * (d + r1 + r2)
	return r1*r1*a1 + r2*r2*a2 - 0.5*math.Sqrt(math.Max(0, k))
}

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }

// centreDistance returns the distance at which circles of radii r1, r2 overlap by the given
// area, by bisection on [|r1−r2|, r1+r2] where lensArea falls monotonically from the smaller
// disc's area to 0. An overlap at or above the smaller disc gives |r1−r2| (internally
// tangent: one circle inside the other); zero overlap gives r1+r2 (externally tangent).
func centreDistance(r1, r2, overlap float64) float64 {
	lo, hi := math.Abs(r1-r2), r1+r2
	if overlap <= 0 {
		return hi
	}
	if r := math.Min(r1, r2); overlap >= math.Pi*r*r {
		return lo
	}
	for range 200 {
		mid := (lo + hi) / 2
		if lensArea(r1, r2, mid) > overlap {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*(r1+r2) {
			break
		}
	}
	return (lo + hi) / 2
}

// vennCircles places circle A left of circle B, both on the line y = 0, with areas
// proportional to |A| = both+aOnly and |B| = both+bOnly (1 problem = 1 unit of area) and the
// overlap area proportional to both. Disjoint sets (both = 0) get a visible gap of
// 15% of the larger radius instead of touching.
func vennCircles(both, aOnly, bOnly int) (xa, ra, xb, rb float64) {
	ra = math.Sqrt(float64(both+aOnly) / math.Pi)
	rb = math.Sqrt(float64(both+bOnly) / math.Pi)
	d := centreDistance(ra, rb, float64(both))
	switch {
	case both == 0:
		d = ra + rb + 0.15*math.Max(ra, rb)
	case aOnly == 0 || bOnly == 0: // exact, where bisection would stop a rounding error short
		d = math.Abs(ra - rb)
	}
	return 0, ra, d, rb
}

// lensPolygon returns the outline of the intersection of two circles centred at (xa, y) and
// (xb, y), xa <= xb, that cross (|ra−rb| < xb−xa < ra+rb), as points in screen coordinates:
// A's arc right of the common chord, then B's arc left of it, perArc points each. It returns
// nil when the circles do not cross (apart, or one inside the other).
func lensPolygon(xa, ra, xb, rb, y float64, perArc int) [][2]float64 {
	d := xb - xa
	if d >= ra+rb || d <= math.Abs(ra-rb) {
		return nil
	}
	xi := xa + (d*d+ra*ra-rb*rb)/(2*d) // the chord is the vertical line x = xi
	alpha := math.Acos(clamp((xi-xa)/ra, -1, 1))
	beta := math.Acos(clamp((xb-xi)/rb, -1, 1))
	pts := make([][2]float64, 0, 2*perArc)
	for i := range perArc {
		t := -alpha + 2*alpha*float64(i)/float64(perArc-1)
		pts = append(pts, [2]float64{xa + ra*math.Cos(t), y + ra*math.Sin(t)})
	}
	for i := range perArc {
		t := math.Pi - beta + 2*beta*float64(i)/float64(perArc-1)
		pts = append(pts, [2]float64{xb + rb*math.Cos(t), y + rb*math.Sin(t)})
	}
	return pts
}

// polygonArea is the shoelace area of a closed polygon.
func polygonArea(pts [][2]float64) float64 {
	s := 0.0
	for i := range pts {
		j := (i + 1) % len(pts)
		s += pts[i][0]*pts[j][1] - pts[j][0]*pts[i][1]
	}
	return math.Abs(s) / 2
}

package charts

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/event"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// Venn regions, as filled into VennInput.RegionURL.
const (
	RegionBoth    = "both"
	RegionAOnly   = "a-only"
	RegionBOnly   = "b-only"
	RegionNeither = "neither"
)

// VennInput is the solved-set comparison of two models at the sampling budget (a problem is
// solved if at least one of its n samples is correct, c >= 1).
type VennInput struct {
	Title                       string
	A, B                        string // model names; A is drawn on the left (put the base model here)
	Both, AOnly, BOnly, Neither int    // problem counts per region, >= 0
	// Total is the number of problems; 0 means Both+AOnly+BOnly+Neither, anything else must
	// equal that sum.
	Total int
	// RegionURL, if set, makes the regions links: "{region}" is replaced by "both", "a-only",
	// "b-only" or "neither" (e.g. "/comparisons/7/problems?pair=2&region={region}"). Only
	// relative, http and https URLs are accepted.
	RegionURL string
	// BColor is B's 1-based palette index (its model's position + 1, so
	// that a model keeps its colour on every chart); 0 for the second colour.
	BColor int
	Options
}

// Venn draws the two solved sets as circles whose areas are proportional to |A| and |B| and
// whose overlap area is proportional to Both (centre distance solved by bisection on the lens
// area), inside a frame standing for all problems. Region counts are written in the regions (or
// just outside a region too thin to hold them), the model names with their solved totals in
// the frame's top corners in the circles' colours, and "neither: N of T problems" at its
// bottom. Hovering a region shows its tooltip; with RegionURL a click on a region, its count
// or the caption navigates to the region's URL (window.location.assign).
//
// Degenerate cases draw what is true: no overlap leaves a gap between the circles, a set
// inside the other draws a circle inside a circle, an empty set draws no circle (its name
// still shows with 0), and both sets empty draws only the frame.
//
// Errors: empty id prefix, empty model names, negative counts, a Total that differs from the
// sum, a RegionURL without "{region}", unparsable, or with a scheme other than http(s).
func Venn(id string, in VennInput) (Snippet, error) {
	fullID, err := chartID("venn", id)
	if err != nil {
		return Snippet{}, err
	}
	if in.A == "" || in.B == "" {
		return Snippet{}, errors.New("venn chart: empty model name")
	}
	if in.Both < 0 || in.AOnly < 0 || in.BOnly < 0 || in.Neither < 0 {
		return Snippet{}, fmt.Errorf("venn chart: negative count (both %d, a-only %d, b-only %d, neither %d)",
			in.Both, in.AOnly, in.BOnly, in.Neither)
	}
	sum := in.Both + in.AOnly + in.BOnly + in.Neither
	total := in.Total
	if total == 0 {
		total = sum
	}
	if total != sum {
		return Snippet{}, fmt.Errorf("venn chart: total %d differs from the region counts' sum %d", total, sum)
	}
	links, err := regionLinks(in.RegionURL)
	if err != nil {
		return Snippet{}, fmt.Errorf("venn chart: %w", err)
	}

	height := in.Height
	if height == 0 {
		height = 360
	}
	g := vennLayoutPx(in.Both, in.AOnly, in.BOnly, float64(height))
	colA, colB := color(0), color(1)
	if in.BColor > 0 {
		colB = color(in.BColor - 1)
	}
	region := func(name, tip string) map[string]any {
		el := map[string]any{"name": tip}
		if links != nil {
			el["info"] = links[name]
			el["cursor"] = "pointer"
			el["name"] = tip + " (click to list)"
		} else {
			el["cursor"] = "default"
		}
		return el
	}
	withRegion := func(el map[string]any, name, tip string) map[string]any {
		for k, v := range region(name, tip) {
			el[k] = v
		}
		return el
	}
	tips := map[string]string{
		RegionBoth:    fmt.Sprintf("Solved by both: %d", in.Both),
		RegionAOnly:   fmt.Sprintf("Solved only by %s: %d", in.A, in.AOnly),
		RegionBOnly:   fmt.Sprintf("Solved only by %s: %d", in.B, in.BOnly),
		RegionNeither: fmt.Sprintf("Solved by neither: %d", in.Neither),
	}

	els := []any{withRegion(map[string]any{"type": "rect",
		"shape": map[string]any{"x": 0, "y": 0, "width": g.frameW, "height": g.frameH, "r": 6},
		"style": map[string]any{"fill": "#f7f7f7", "stroke": "#bbbbbb", "lineWidth": 1}},
		RegionNeither, tips[RegionNeither])}
	// Circles A and B carry the one-only regions; the lens drawn over them carries "both", so
	// what shows (and takes the click) of each circle is exactly its one-only region.
	fillA, fillB, fillBoth := tint(colA, 0.3), tint(colB, 0.3), tint(mix(colA, colB), 0.5)
	disc := func(x, r float64, fill string) map[string]any {
		return map[string]any{"type": "circle", "shape": map[string]any{"cx": x, "cy": g.cy, "r": r},
			"style": map[string]any{"fill": fill, "stroke": "none"}}
	}
	if g.ra > 0 {
		els = append(els, withRegion(disc(g.xa, g.ra, fillA), RegionAOnly, tips[RegionAOnly]))
	}
	if g.rb > 0 {
		els = append(els, withRegion(disc(g.xb, g.rb, fillB), RegionBOnly, tips[RegionBOnly]))
	}
	var lens [][2]float64
	if in.Both > 0 && in.AOnly > 0 && in.BOnly > 0 {
		lens = lensPolygon(g.xa, g.ra, g.xb, g.rb, g.cy, 64)
	}
	if lens != nil {
		for i := range lens {
			lens[i] = [2]float64{px(lens[i][0]), px(lens[i][1])}
		}
		els = append(els, withRegion(map[string]any{"type": "polygon", "shape": map[string]any{"points": lens},
			"style": map[string]any{"fill": fillBoth, "stroke": "none"}}, RegionBoth, tips[RegionBoth]))
	} else if in.Both > 0 { // one set inside the other: the inner circle is the lens
		x, r := g.xa, g.ra
		if g.rb < g.ra {
			x, r = g.xb, g.rb
		}
		els = append(els, withRegion(disc(x, r, fillBoth), RegionBoth, tips[RegionBoth]))
	}
	for _, c := range []struct {
		x, r float64
		col  string
	}{{g.xa, g.ra, colA}, {g.xb, g.rb, colB}} {
		if c.r > 0 {
			els = append(els, map[string]any{"type": "circle", "silent": true,
				"shape": map[string]any{"cx": c.x, "cy": g.cy, "r": c.r},
				"style": map[string]any{"fill": "none", "stroke": c.col, "lineWidth": 2}})
		}
	}
	text := func(x, y float64, s, align, fill, font string, width float64) map[string]any {
		st := map[string]any{"text": s, "align": align, "verticalAlign": "middle", "fill": fill, "font": font}
		if width > 0 {
			st["width"] = width
			st["overflow"] = "truncate"
		}
		return map[string]any{"type": "text", "x": x, "y": y, "style": st}
	}
	const countFont = "bold 15px sans-serif"
	for _, l := range g.labels(in.Both, in.AOnly, in.BOnly) {
		els = append(els, withRegion(text(l.x, g.cy, fmt.Sprint(l.count), l.align, "#222222", countFont, 0),
			l.region, tips[l.region]))
	}
	nameW := g.frameW/2 - 20
	els = append(els,
		text(12, 16, in.A, "left", colA, "bold 13px sans-serif", nameW),
		text(12, 33, fmt.Sprintf("%d solved", in.Both+in.AOnly), "left", colA, "12px sans-serif", 0),
		text(g.frameW-12, 16, in.B, "right", colB, "bold 13px sans-serif", nameW),
		text(g.frameW-12, 33, fmt.Sprintf("%d solved", in.Both+in.BOnly), "right", colB, "12px sans-serif", 0),
		withRegion(text(g.frameW-12, g.frameH-16, fmt.Sprintf("neither: %d of %d problems", in.Neither, total),
			"right", "#444444", "13px sans-serif", 0), RegionNeither, tips[RegionNeither]),
	)

	c := charts.NewPie()
	if links != nil {
		c.SetGlobalOptions(charts.WithEventListeners(event.Listener{EventName: "click", Handler: opts.FuncOpts(
			`function (p) { if (p.componentType === 'graphic' && typeof p.info === 'string') { window.location.assign(p.info); } }`)}))
	}
	overlay := map[string]any{
		"series":  []any{},
		"legend":  map[string]any{"show": false},
		"tooltip": map[string]any{"trigger": "item"},
		"graphic": []any{map[string]any{"type": "group", "left": "center", "top": vennFrameTop, "children": els}},
		// The numbers behind the picture, for the snippet's Option ("download data").
		"dataset": map[string]any{"source": [][]any{
			{"region", "models", "problems"},
			{RegionBoth, in.A + " & " + in.B, in.Both},
			{RegionAOnly, in.A, in.AOnly},
			{RegionBOnly, in.B, in.BOnly},
			{RegionNeither, "", in.Neither},
		}},
	}
	if err := setup(&c.BaseConfiguration, fullID, in.Title, in.Options, height, overlay); err != nil {
		return Snippet{}, err
	}
	return finish(fullID, c)
}

// regionLinks checks the URL template and fills it in per region; nil when there is none.
func regionLinks(tmpl string) (map[string]string, error) {
	if tmpl == "" {
		return nil, nil
	}
	if !strings.Contains(tmpl, "{region}") {
		return nil, fmt.Errorf("region URL %q has no {region} placeholder", tmpl)
	}
	out := map[string]string{}
	for _, r := range []string{RegionBoth, RegionAOnly, RegionBOnly, RegionNeither} {
		s := strings.ReplaceAll(tmpl, "{region}", r)
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("region URL: %w", err)
		}
		if u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" {
			return nil, fmt.Errorf("region URL scheme %q: only relative, http and https URLs are allowed", u.Scheme)
		}
		out[r] = s
	}
	return out, nil
}

// vennFrameTop leaves room for the (page's) title line and the toolbox above the frame.
const vennFrameTop = 30

// vennGeometry is the Venn drawing in pixels, relative to the frame's top-left corner.
type vennGeometry struct {
	frameW, frameH float64
	xa, ra, xb, rb float64
	cy             float64
}

// vennLayoutPx scales the unit circles of vennCircles into a frame that fits a chart of the
// given height; the union of the circles is at most 320 px wide and centred in a frame with
// 80 px on each side for labels outside thin regions (at most 480 px wide in all).
func vennLayoutPx(both, aOnly, bOnly int, height float64) vennGeometry {
	const topRoom, bottomRoom, maxW, side = 48.0, 36.0, 320.0, 80.0
	g := vennGeometry{frameH: height - vennFrameTop - 8}
	xa, ra, xb, rb := vennCircles(both, aOnly, bOnly)
	left, right := math.Min(xa-ra, xb-rb), math.Max(xa+ra, xb+rb)
	unitW, unitH := right-left, 2*math.Max(ra, rb)
	availH := g.frameH - topRoom - bottomRoom
	s := 0.0
	if unitH > 0 {
		s = math.Min(maxW/unitW, availH/unitH)
	}
	drawW := unitW * s
	g.frameW = math.Max(drawW+2*side, 360)
	off := (g.frameW-drawW)/2 - left*s
	g.xa, g.ra, g.xb, g.rb = off+xa*s, ra*s, off+xb*s, rb*s
	if unitH == 0 { // both sets empty: keep label positions apart
		g.xa, g.xb = g.frameW/2-40, g.frameW/2+40
	}
	g.cy = topRoom + availH/2
	g.frameW, g.xa, g.ra, g.xb, g.rb, g.cy = px(g.frameW), px(g.xa), px(g.ra), px(g.xb), px(g.rb), px(g.cy)
	return g
}

// px rounds a pixel coordinate to 0.01 px, which keeps the option JSON short.
func px(v float64) float64 { return math.Round(v*100) / 100 }

type vennLabel struct {
	region string
	count  int
	x      float64
	align  string
}

// labels places each non-empty region's count on the centre line: in the middle of the
// region's widest horizontal span, or just outside the circle when that span is narrower than
// minSpan px.
func (g vennGeometry) labels(both, aOnly, bOnly int) []vennLabel {
	const minSpan, gap = 34.0, 8.0
	var out []vennLabel
	aL, aR, bL, bR := g.xa-g.ra, g.xa+g.ra, g.xb-g.rb, g.xb+g.rb
	if aOnly > 0 {
		end := math.Min(aR, bL) // A-only on the centre line runs from A's left edge to B's
		if bL <= aL {           // B covers A's left part (A can't be inside B here: aOnly > 0)
			end = aL
		}
		if end-aL >= minSpan {
			out = append(out, vennLabel{RegionAOnly, aOnly, (aL + end) / 2, "center"})
		} else {
			out = append(out, vennLabel{RegionAOnly, aOnly, aL - gap, "right"})
		}
	}
	if bOnly > 0 {
		start := math.Max(bL, aR)
		if aR >= bR {
			start = bR
		}
		if bR-start >= minSpan {
			out = append(out, vennLabel{RegionBOnly, bOnly, (start + bR) / 2, "center"})
		} else {
			out = append(out, vennLabel{RegionBOnly, bOnly, bR + gap, "left"})
		}
	}
	if both > 0 {
		out = append(out, vennLabel{RegionBoth, both, (math.Max(aL, bL) + math.Min(aR, bR)) / 2, "center"})
	}
	return out
}

// mix averages two #rrggbb colours; tint lays a colour at the given opacity over white (opaque
// fills, so the lens hides the circles under it).
func mix(a, b string) string {
	ra, ga, ba := rgb(a)
	rb, gb, bb := rgb(b)
	return fmt.Sprintf("#%02x%02x%02x", (ra+rb)/2, (ga+gb)/2, (ba+bb)/2)
}

func tint(c string, alpha float64) string {
	r, g, b := rgb(c)
	over := func(v int) int { return int(math.Round(alpha*float64(v) + (1-alpha)*255)) }
	return fmt.Sprintf("#%02x%02x%02x", over(r), over(g), over(b))
}

func rgb(c string) (r, g, b int) {
	fmt.Sscanf(c, "#%02x%02x%02x", &r, &g, &b)
	return r, g, b
}

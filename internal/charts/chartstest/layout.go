// Package chartstest reads where ECharts drew a chart's parts, for browser tests of
// internal/charts and of the pages that embed its snippets: the legend, the plot, the axes,
// the save-image icon and every text, as pixel rectangles in the chart, and what of the legend
// a PNG export holds.
package chartstest

import (
	"fmt"
	"slices"
	"strings"
)

// Rect is a rectangle in CSS pixels from the chart's top left corner.
type Rect struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	W float64 `json:"w"`
	H float64 `json:"h"`
}

// Overlaps reports whether r and o share more than 1 px in both directions (touching edges
// and anti-aliasing do not count).
func (r Rect) Overlaps(o Rect) bool {
	return min(r.X+r.W, o.X+o.W)-max(r.X, o.X) > 1 && min(r.Y+r.H, o.Y+o.H)-max(r.Y, o.Y) > 1
}

// Inside reports whether r lies within a w × h chart (1 px of slack).
func (r Rect) Inside(w, h float64) bool {
	return r.X >= -1 && r.Y >= -1 && r.X+r.W <= w+1 && r.Y+r.H <= h+1
}

func (r Rect) String() string { return fmt.Sprintf("[%.0f,%.0f %.0f×%.0f]", r.X, r.Y, r.W, r.H) }

// Text is one drawn text and the component that drew it: legend, toolbox, title, xAxis,
// yAxis or series (labels, mark lines).
type Text struct {
	Text  string `json:"text"`
	Rect  Rect   `json:"rect"`
	Owner string `json:"owner"`
}

// Layout is what LayoutJS reads from one chart.
type Layout struct {
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	// LegendType is the legend's type ("plain" or "scroll"); "" when there is no legend.
	LegendType string `json:"legendType"`
	// LegendNames are the names in the legend's data, in order.
	LegendNames []string `json:"legendNames"`
	// LegendSelected is the legend's selected map (names shown or hidden at first).
	LegendSelected map[string]bool `json:"legendSelected"`
	Legend         *Rect           `json:"legend"`
	Plot           *Rect           `json:"plot"`
	// Toolbox is the save-image icon as drawn.
	Toolbox *Rect  `json:"toolbox"`
	Texts   []Text `json:"texts"`
}

// LayoutJS is a JavaScript function expression: called with a chart's div (the element
// ECharts was initialised on), it returns the Layout of its chart as a plain object, or null
// when the div holds no chart.
const LayoutJS = `(function (div) {
  var inst = div && echarts.getInstanceByDom(div);
  if (!inst) { return null; }
  var model = inst.getModel();
  var rectOf = function (el) {
    var r = el.getBoundingRect().clone();
    el.updateTransform && el.updateTransform();
    var m = el.getComputedTransform ? el.getComputedTransform() : el.transform;
    if (m) { r.applyTransform(m); }
    return {x: r.x, y: r.y, w: r.width, h: r.height};
  };
  var groups = [];
  var viewRect = function (type) {
    var cm = model.getComponent(type);
    var view = cm && inst.getViewOfComponentModel(cm);
    if (!view || cm.get('show') === false) { return null; }
    groups.push([view.group, type]);
    return rectOf(view.group);
  };
  var out = {width: inst.getWidth(), height: inst.getHeight(), legendType: '', legendNames: [], legendSelected: {}};
  var lm = model.getComponent('legend');
  if (lm && lm.get('show') !== false) {
    out.legendType = lm.get('type') || 'plain';
    out.legendNames = (lm.get('data') || []).map(function (d) { return String(d && d.name !== undefined ? d.name : d); });
    out.legendSelected = lm.get('selected') || {};
  }
  out.legend = out.legendType ? viewRect('legend') : null;
  out.toolbox = viewRect('toolbox');
  viewRect('title');
  ['xAxis', 'yAxis'].forEach(function (t) { model.eachComponent(t, function (m) {
    var v = inst.getViewOfComponentModel(m); if (v) { groups.push([v.group, t]); }
  }); });
  var gm = model.getComponent('grid');
  if (gm && gm.coordinateSystem) {
    var g = gm.coordinateSystem.getRect();
    out.plot = {x: g.x, y: g.y, w: g.width, h: g.height};
  }
  out.texts = [];
  var icon = null;
  inst.getZr().storage.getDisplayList(true).forEach(function (el) {
    if (el.ignore || el.invisible) { return; }
    var owner = 'series';
    for (var p = el; p; p = p.parent) {
      for (var i = 0; i < groups.length; i++) { if (groups[i][0] === p) { owner = groups[i][1]; } }
      if (owner !== 'series') { break; }
    }
    var isText = el.style && el.style.text != null;
    if (isText && el.style.text !== '') {
      out.texts.push({text: String(el.style.text), rect: rectOf(el), owner: owner});
    } else if (!isText && owner === 'toolbox' && el.type !== 'rect') {
      // The icons as drawn, not the toolbox's (transparent) background rectangle.
      var r = rectOf(el);
      if (!icon) { icon = r; } else {
        var x2 = Math.max(icon.x + icon.w, r.x + r.w), y2 = Math.max(icon.y + icon.h, r.y + r.h);
        icon.x = Math.min(icon.x, r.x); icon.y = Math.min(icon.y, r.y);
        icon.w = x2 - icon.x; icon.h = y2 - icon.y;
      }
    }
  });
  out.toolbox = icon;
  return out;
})`

// PNGLegendInkJS is a JavaScript function expression: called with a chart's div and a
// rectangle {x, y, w, h} in CSS pixels, it resolves to the share of that rectangle's pixels
// that are not white in the chart's PNG export (as the toolbox saves it: pixel ratio 2, white
// background), or -1 when the export is not 2× the chart's size.
const PNGLegendInkJS = `(function (div, r) {
  var inst = echarts.getInstanceByDom(div);
  var url = inst.getDataURL({type: 'png', pixelRatio: 2, backgroundColor: '#ffffff', excludeComponents: ['toolbox']});
  return new Promise(function (resolve) {
    var img = new Image();
    img.onload = function () {
      if (img.width !== Math.round(inst.getWidth() * 2) || img.height !== Math.round(inst.getHeight() * 2)) { resolve(-1); return; }
      var c = document.createElement('canvas');
      c.width = img.width; c.height = img.height;
      var ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0);
      var d = ctx.getImageData(Math.floor(r.x * 2), Math.floor(r.y * 2), Math.ceil(r.w * 2), Math.ceil(r.h * 2)).data;
      var ink = 0;
      for (var i = 0; i < d.length; i += 4) { if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) { ink++; } }
      resolve(ink / (d.length / 4));
    };
    img.src = url;
  });
})`

// Problems lists what reads wrong in l: a paginated legend; a name of names missing from the
// legend or without its text drawn inside the chart; a legend outside the chart or over the
// plot or an axis' labels; any text over the save-image icon. Empty means none.
func (l Layout) Problems(names []string) []string {
	var out []string
	if len(names) > 0 {
		if l.LegendType != "plain" {
			out = append(out, fmt.Sprintf("legend type %q, want plain", l.LegendType))
		}
		drawn := map[string]int{}
		for _, t := range l.Texts {
			if t.Owner == "legend" && t.Rect.Inside(l.Width, l.Height) {
				drawn[t.Text]++
			}
		}
		for _, n := range names {
			if !slices.Contains(l.LegendNames, n) {
				out = append(out, fmt.Sprintf("%q is not in the legend's data %q", n, l.LegendNames))
			}
			if drawn[n] == 0 {
				out = append(out, fmt.Sprintf("legend text %q is not drawn inside the %.0f×%.0f chart", n, l.Width, l.Height))
			}
		}
		if l.Legend == nil {
			out = append(out, "no legend drawn")
		} else {
			if !l.Legend.Inside(l.Width, l.Height) {
				out = append(out, fmt.Sprintf("legend %v leaves the %.0f×%.0f chart", *l.Legend, l.Width, l.Height))
			}
			if l.Plot != nil && l.Legend.Overlaps(*l.Plot) {
				out = append(out, fmt.Sprintf("legend %v overlaps the plot %v", *l.Legend, *l.Plot))
			}
			for _, t := range l.Texts {
				if (t.Owner == "xAxis" || t.Owner == "yAxis") && l.Legend.Overlaps(t.Rect) {
					out = append(out, fmt.Sprintf("legend %v overlaps the %s text %q %v", *l.Legend, t.Owner, t.Text, t.Rect))
				}
			}
		}
	}
	if l.Toolbox != nil {
		for _, t := range l.Texts {
			if t.Owner != "toolbox" && l.Toolbox.Overlaps(t.Rect) {
				out = append(out, fmt.Sprintf("%s text %q %v overlaps the save-image icon %v", t.Owner, t.Text, t.Rect, *l.Toolbox))
			}
		}
	}
	return out
}

// Describe is a one-line summary of l for failure messages.
func (l Layout) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%.0f×%.0f, legend %s %v", l.Width, l.Height, l.LegendType, l.Legend)
	if l.Plot != nil {
		fmt.Fprintf(&b, ", plot %v", *l.Plot)
	}
	if l.Toolbox != nil {
		fmt.Fprintf(&b, ", toolbox %v", *l.Toolbox)
	}
	return b.String()
}

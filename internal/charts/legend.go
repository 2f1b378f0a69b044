package charts

import (
	"fmt"
	"unicode/utf8"
)

// Legends are plain (never paginated: a "1/2" scroll legend hides half the models, also in
// PNG exports) and sit at the bottom of the chart, wrapping onto as many rows as the chart's
// width needs. The plot keeps its height: each row past the first makes the chart taller
// (Options.Height is the height with one row), unless the chart fills a container whose
// height is fixed (an ancestor with the data-chart-fill attribute, as the share embed has),
// where the rows come out of the plot instead.
//
// Go cannot know the width the chart gets, so the option carries an estimate (rows at
// legendEstimateWidth); the snippet's script measures the legend ECharts laid out and sets the
// grid's bottom and the chart's height from it, again whenever the chart is resized.
const (
	// legendRowPx is one row of legend items: 14 px items plus the 10 px gap between rows;
	// with the legend's 5 px padding above and below, n rows take n × 24 px.
	legendRowPx = 24
	// legendEstimateWidth is the chart width (px) the Go-side estimate assumes: about the
	// share embed's (720 px) less its margins.
	legendEstimateWidth = 680
)

// bottomLegend is the legend option for data: the series names (strings) or legend data items
// (maps with "name"), in order.
func bottomLegend(data []any) map[string]any {
	return map[string]any{"type": "plain", "data": data, "bottom": 0, "left": 8, "right": 8}
}

// legendRows estimates the rows ECharts' box layout needs for the legend items at width px:
// each item is a 25 px icon, a 5 px gap and its text (about 7 px a character at 12 px),
// items 10 px apart, wrapping when the next item would pass the width.
func legendRows(data []any, width int) int {
	rows, x := 1, 0.0
	for i, d := range data {
		name, _ := d.(string)
		if m, ok := d.(map[string]any); ok {
			name, _ = m["name"].(string)
		}
		w := 30 + 7*float64(utf8.RuneCountInString(name))
		if i > 0 && x+10+w > float64(width) {
			rows++
			x = w
			continue
		}
		if i > 0 {
			x += 10
		}
		x += w
	}
	return rows
}

// layoutLegend turns the builder's grid bottom (the space its axes need below the plot) into
// one that also holds the estimated legend rows, and returns the chart height for them with
// the script that keeps both right in the browser. It does nothing (returns height and no
// script) for a chart without a shown, bottom legend with data.
func layoutLegend(id string, overlay map[string]any, height int) (int, string) {
	lg, _ := overlay["legend"].(map[string]any)
	data, _ := lg["data"].([]any)
	grid, _ := overlay["grid"].(map[string]any)
	if lg == nil || len(data) == 0 || lg["show"] == false || grid == nil {
		return height, ""
	}
	axis, ok := grid["bottom"].(int)
	if !ok {
		return height, ""
	}
	rows := legendRows(data, legendEstimateWidth)
	grid["bottom"] = axis + rows*legendRowPx
	inst := "%MY_ECHARTS%"
	// The legend view's group is the laid-out legend with its padding (its background
	// rectangle). getModel and getViewOfComponentModel are ECharts instance methods its own
	// extensions use; without them the estimate stays.
	script := fmt.Sprintf(`const fit_%[1]s = function () {
  const inst = %[2]s;
  if (inst.isDisposed() || !inst.getModel || !inst.getViewOfComponentModel) { return; }
  const lm = inst.getModel().getComponent('legend');
  const view = lm && inst.getViewOfComponentModel(lm);
  if (!view) { return; }
  /* A name wider than the chart (a collection's "comparison · model") breaks onto more lines
     instead of leaving the chart; the others keep one line. (go-echarts joins the lines.) */
  const avail = Math.max(60, inst.getWidth() - 16 - 30 - 12);
  const ctx_%[1]s = document.createElement('canvas').getContext('2d');
  ctx_%[1]s.font = '12px sans-serif';
  let changed = false;
  const data = ((inst.getOption().legend || [])[0] || {}).data || [];
  const fitted = data.map(function (d) {
    const item = d !== null && typeof d === 'object' ? Object.assign({}, d) : {name: String(d)};
    const long = ctx_%[1]s.measureText(String(item.name)).width > avail;
    const ts = item.textStyle || {};
    if (long && (ts.overflow !== 'break' || ts.width !== avail)) {
      item.textStyle = Object.assign({}, ts, {width: avail, overflow: 'break', lineHeight: 16}); changed = true;
    } else if (!long && ts.overflow === 'break') {
      item.textStyle = Object.assign({}, ts, {width: null, overflow: 'none'}); changed = true;
    }
    return item;
  });
  if (changed) { inst.setOption({legend: [{data: fitted}]}); }
  const lh = Math.ceil(view.group.getBoundingRect().height);
  const bottom = %[3]d + lh;
  const grids = inst.getOption().grid || [];
  if (grids.length && grids[0].bottom !== bottom) { inst.setOption({grid: [{bottom: bottom}]}); }
  if (!el_%[1]s.closest('[data-chart-fill]')) {
    const h = (%[4]d + Math.max(0, lh - %[5]d) + (Number(el_%[1]s.dataset.titleExtra) || 0)) + 'px';
    if (el_%[1]s.style.height !== h) { el_%[1]s.style.height = h; }
  }
};
fit_%[1]s();`, id, inst, axis, height, legendRowPx)
	return height + (rows-1)*legendRowPx, script
}

// legendData is names as legend data.
func legendData(names []string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}

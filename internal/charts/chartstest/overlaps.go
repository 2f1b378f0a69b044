package chartstest

// TextOverlapsJS is a JavaScript function expression: called with a chart's div, it lists the
// pairs of texts ECharts drew there over each other, each text as the quadrilateral its font
// size covers (rotated labels too), 1 px in from each edge so that touching does not count.
const TextOverlapsJS = `(function (div) {
  var inst = echarts.getInstanceByDom(div);
  if (!inst) { return []; }
  var quads = [];
  inst.getZr().storage.getDisplayList(true).forEach(function (el) {
    if (el.ignore || el.invisible || !el.style || el.style.text == null || String(el.style.text).trim() === '') { return; }
    var m = /(\d+(?:\.\d+)?)px/.exec(el.style.font || '');
    var fs = m ? parseFloat(m[1]) : 12;
    var r = el.getBoundingRect();
    var bl = el.style.textBaseline;
    var y = r.y + r.height / 2 - fs / 2;
    if (bl === 'top') { y = r.y; } else if (bl === 'bottom' || bl === 'alphabetic') { y = r.y + r.height - fs; }
    el.updateTransform && el.updateTransform();
    var t = el.getComputedTransform ? el.getComputedTransform() : el.transform;
    // 1 px in from each edge: touching and anti-aliasing do not count.
    var pts = [[r.x + 1, y + 1], [r.x + r.width - 1, y + 1], [r.x + r.width - 1, y + fs - 1], [r.x + 1, y + fs - 1]].map(function (p) {
      return t ? [t[0] * p[0] + t[2] * p[1] + t[4], t[1] * p[0] + t[3] * p[1] + t[5]] : p;
    });
    quads.push({text: String(el.style.text), pts: pts});
  });
  var separated = function (a, b) {
    return [a, b].some(function (q) {
      return q.pts.some(function (p, i) {
        var n = q.pts[(i + 1) % 4], ax = -(n[1] - p[1]), ay = n[0] - p[0];
        var pa = a.pts.map(function (v) { return v[0] * ax + v[1] * ay; }), pb = b.pts.map(function (v) { return v[0] * ax + v[1] * ay; });
        return Math.max.apply(null, pa) <= Math.min.apply(null, pb) || Math.max.apply(null, pb) <= Math.min.apply(null, pa);
      });
    });
  };
  var out = [];
  for (var i = 0; i < quads.length; i++) {
    for (var j = i + 1; j < quads.length; j++) {
      if (!separated(quads[i], quads[j])) {
        var at = quads[i].pts[0];
        out.push(JSON.stringify(quads[i].text) + " and " + JSON.stringify(quads[j].text) + " overlap at " + Math.round(at[0]) + "," + Math.round(at[1]));
      }
    }
  }
  return out;
})`

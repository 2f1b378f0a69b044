// Package charts builds Reach's ECharts charts with go-echarts and returns them as HTML snippets
// (a <div> plus an inline <script>) for templ pages.
//
// Page contract: load /static/echarts.min.js (ECharts 6, see static/VENDOR.md) before any snippet;
// embed Snippet.HTML as is (templ.Raw). Each snippet draws into its own div, resizes with its
// container, keeps its variables in a block scope (so htmx can swap the same snippet in again)
// and disposes of its ECharts instance once its div leaves the document. Get the instance with
// echarts.getInstanceByDom(document.getElementById(snippet.ID)).
//
// Legends are never paginated: they wrap, and the chart grows by the rows past the first
// (legend.go). A page that gives a chart a fixed height instead (the share embed) marks an
// ancestor of the snippet with the data-chart-fill attribute and sizes the snippet's div
// itself; the legend's rows then come out of the plot.
//
// Every string a caller passes (model names, titles, labels) ends up only inside JSON strings
// with <, > and & escaped, so it cannot leave the <script> element; custom tooltip formatters
// escape names with echarts.format.encodeHTML before they reach the tooltip's HTML.
package charts

import (
	"github.com/reach-lab/reach/internal/hidden"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"html/template"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/render"
)

// Snippet is one rendered chart.
type Snippet struct {
	// ID is the id of the chart's <div>: the builder's kind, the sanitized caller prefix and,
	// when sanitizing changed the prefix, a short hash of it ("crossover_cmp_7").
	ID string
	// HTML is the <div> and the <script> that draws into it.
	HTML template.HTML
	// Option is the chart's ECharts option as JSON without its JavaScript functions
	// (tooltip formatters, click handlers): the data behind the chart, for a "download data" link.
	Option json.RawMessage
}

// Renderer selects how ECharts draws: Canvas (the default) or SVG. The toolbox's save button
// downloads a PNG (at 2x pixel ratio) with Canvas and an .svg file with SVG.
type Renderer string

const (
	Canvas Renderer = "canvas"
	SVG    Renderer = "svg"
)

// Options are the display settings every builder accepts (embedded in each input).
type Options struct {
	// Renderer is Canvas or SVG; empty means Canvas.
	Renderer Renderer
	// Height is the chart height in CSS pixels with a one-row legend (each further row adds
	// its height); 0 means the builder's default. Width is always 100% of the container.
	Height int
}

// palette gives series i the colour palette[i%len]; the Venn uses the first two, so a page
// that lists the base model first gets the same colour for it everywhere.
// ECharts' nine, then three more so that up to twelve models get twelve colours.
var palette = []string{
	"#5470c6", "#ee6666", "#91cc75", "#fac858", "#73c0de",
	"#3ba272", "#fc8452", "#9a60b4", "#ea7ccc",
	"#8c564b", "#bcbd22", "#2f4554",
}

func color(i int) string { return palette[i%len(palette)] }

// Colour is the colour the charts give model i (0-based position; the palette repeats after
// twelve), for pages that key tables to the charts.
func Colour(i int) string { return color(i) }

// chartID turns a caller prefix into a unique, safe element id: [a-zA-Z0-9_] only, starting
// with the chart kind. Prefixes that differ only in replaced characters stay distinct through
// the hash suffix.
func chartID(kind, prefix string) (string, error) {
	if prefix == "" {
		return "", errors.New("chart id prefix is empty")
	}
	var b strings.Builder
	changed := false
	for _, r := range prefix {
		if r < 128 && (r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
			changed = true
		}
	}
	id := kind + "_" + b.String()
	if changed {
		h := fnv.New32a()
		h.Write([]byte(prefix))
		id += fmt.Sprintf("_%08x", h.Sum32())
	}
	return id, nil
}

// rendered is what every go-echarts chart type offers.
type rendered interface {
	RenderSnippet() render.ChartSnippet
	JSON() map[string]interface{}
}

// setup applies the settings all Reach charts share to a go-echarts chart: id, size, renderer,
// animation off (browser tests screenshot canvases), the save-as-image toolbox, and the
// finishing visitor that merges raw option pieces go-echarts has no field for.
func setup(bc *charts.BaseConfiguration, id, title string, o Options, defaultHeight int, overlay map[string]any) error {
	r := o.Renderer
	if r == "" {
		r = Canvas
	}
	if r != Canvas && r != SVG {
		return fmt.Errorf("renderer %q: want %q or %q", r, Canvas, SVG)
	}
	h := o.Height
	if h == 0 {
		h = defaultHeight
	}
	if h < 0 {
		return fmt.Errorf("height %d px is negative", h)
	}
	h, fit := layoutLegend(id, overlay, h)
	gopts := []charts.GlobalOpts{
		charts.WithInitializationOpts(opts.Initialization{
			ChartID: id, Width: "100%", Height: fmt.Sprintf("%dpx", h), Renderer: string(r),
		}),
		charts.WithAnimation(false),
		charts.WithTitleOpts(opts.Title{Title: title, Left: "left",
			TitleStyle: &opts.TextStyle{FontSize: 15}}),
		charts.WithToolboxOpts(opts.Toolbox{Show: opts.Bool(true), Right: "12", Top: "0",
			Feature: &opts.ToolBoxFeature{SaveAsImage: &opts.ToolBoxFeatureSaveAsImage{
				Show: opts.Bool(true), Type: "png", Name: id, Title: "Save image"}}}),
	}
	for _, g := range gopts {
		g(bc)
	}
	// ECharts reads the PNG pixel ratio and a white background from these; go-echarts has
	// no field for them.
	base := map[string]any{
		"color": palette,
		// ECharts 6 pads the toolbox by 15 px, which put its icon level with labels above
		// the plot (k*, the tallest bar's count); 4 px keeps it in the title's line.
		"toolbox": map[string]any{"padding": 4, "feature": map[string]any{"saveAsImage": map[string]any{
			"pixelRatio": 2, "backgroundColor": "#ffffff"}}},
	}
	deepMerge(base, overlay)
	// Follow the container's width; when htmx swaps the chart out (the observer fires with the
	// element detached), dispose of the instance so ECharts' registry does not keep it. After
	// a resize the legend may wrap differently: fit it again in the next frame (changing the
	// height inside the observer's callback would loop it).
	inst := render.EchartsInstancePlaceholder
	// A title wider than the chart (a phone's) breaks onto more lines rather than run under
	// the save-image icon, and pushes the plot (and what is drawn above it: k*, bar counts,
	// axis names) down by its extra lines, the chart growing by as much: without that the
	// second line sat on the plot's top labels. The title view's group is the laid-out title
	// (getModel and getViewOfComponentModel, as the legend's fit uses them).
	setHeight := "if (!el_" + id + ".closest('[data-chart-fill]')) { const h = (" + fmt.Sprint(h) + " + extra) + 'px'; if (el_" + id + ".style.height !== h) { el_" + id + ".style.height = h; } }"
	if fit != "" {
		setHeight = "" // fit_ID sets the height, adding the title's extra lines
	}
	fitTitle := `const fitTitle_` + id + ` = function () {
  const inst = ` + inst + `;
  if (inst.isDisposed()) { return; }
  const o = inst.getOption();
  const t = (o.title || [])[0];
  const w = Math.max(80, inst.getWidth() - 60);
  if (!t || !t.text) { return; }
  if (!t.textStyle || t.textStyle.width !== w) { inst.setOption({title: [{textStyle: {width: w, overflow: 'break', lineHeight: 20}}]}); }
  if (!inst.getModel || !inst.getViewOfComponentModel) { return; }
  const tm = inst.getModel().getComponent('title');
  const tv = tm && inst.getViewOfComponentModel(tm);
  const grids = o.grid || [];
  if (!tv || !grids.length || typeof grids[0].top !== 'number') { return; }
  const el = el_` + id + `;
  if (el.dataset.gridTops === undefined) { el.dataset.gridTops = JSON.stringify(grids.map(function (g) { return g.top; })); }
  /* One line is 30 px high with its padding (5, a 20 px line, 5): every grid moves down by
     what the title's further lines take, and 16 px more, since what is drawn above the plot
     (k*, the tallest bar's count) sits beside a one-line title but would run under a title
     as wide as the chart. */
  const more = Math.ceil(tv.group.getBoundingRect().height) - 30;
  const extra = more > 0 ? more + 16 : 0;
  el.dataset.titleExtra = extra;
  const tops = JSON.parse(el.dataset.gridTops);
  if (tops.some(function (t, i) { return typeof t === 'number' && grids[i].top !== t + extra; })) {
    inst.setOption({grid: tops.map(function (t) { return typeof t === 'number' ? {top: t + extra} : {}; })});
  }
  ` + setHeight + `
};
fitTitle_` + id + `();`
	refit := "\n  requestAnimationFrame(function () { fitTitle_" + id + "(); });"
	if fit != "" {
		refit = "\n  requestAnimationFrame(function () { fitTitle_" + id + "(); fit_" + id + "(); });"
	}
	bc.AddJSFuncStrs(opts.FuncOpts(`const el_` + id + ` = document.getElementById('` + id + `');
const ro_` + id + ` = new ResizeObserver(function () {
  if (!el_` + id + `.isConnected) { ro_` + id + `.disconnect(); ` + inst + `.dispose(); return; }
  ` + inst + `.resize();` + refit + `
});
ro_` + id + `.observe(el_` + id + `);`))
	bc.AddJSFuncStrs(opts.FuncOpts(fitTitle))
	if fit != "" {
		bc.AddJSFuncStrs(opts.FuncOpts(fit))
	}
	bc.Accept(finisher{overlay: base})
	return nil
}

// finish renders the chart into a Snippet.
func finish(id string, c rendered) (Snippet, error) {
	s := c.RenderSnippet()
	script, err := blockScope(s.Script)
	if err != nil {
		return Snippet{}, fmt.Errorf("chart %s: %w", id, err)
	}
	opt, err := dataOption(c.JSON())
	if err != nil {
		return Snippet{}, fmt.Errorf("chart %s: option JSON: %w", id, err)
	}
	// Model names are drawn in legends and axes as given: a hidden
	// character (a right-to-left override, say) is shown as its marker
	// there as on the pages. Markers are plain characters, so the script
	// and JSON stay valid.
	html := hidden.Visible(strings.TrimSpace(s.Element) + "\n" + script)
	return Snippet{ID: id, HTML: template.HTML(html), Option: json.RawMessage(hidden.Visible(string(opt)))}, nil
}

// blockScope wraps the body of go-echarts' <script> in braces: its top-level `let` would
// otherwise throw "already declared" when htmx swaps in the same chart a second time. It also
// refuses a script that could end early (only possible if escaping failed).
func blockScope(script string) (string, error) {
	script = strings.TrimSpace(script)
	open := strings.Index(script, ">")
	end := strings.LastIndex(script, "</script>")
	if !strings.HasPrefix(script, "<script") || open < 0 || end < open {
		return "", errors.New("go-echarts script has an unexpected shape")
	}
	body := script[open+1 : end]
	lower := strings.ToLower(body)
	if strings.Contains(lower, "</script") || strings.Contains(lower, "<!--") {
		return "", errors.New("script body contains </script or <!--")
	}
	return "<script>\n{" + body + "}\n</script>", nil
}

// dataOption returns the option as strict JSON (HTML-escaped) without JavaScript functions.
func dataOption(obj map[string]any) (json.RawMessage, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(dropFuncs(v))
}

// funcMarker is how go-echarts marks JavaScript code inside option strings (opts.FuncOpts).
const funcMarker = "__f__"

func dropFuncs(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if s, ok := e.(string); ok && strings.HasPrefix(s, funcMarker) {
				delete(t, k)
				continue
			}
			t[k] = dropFuncs(e)
		}
	case []any:
		for i, e := range t {
			t[i] = dropFuncs(e)
		}
	}
	return v
}

// finisher is a go-echarts configuration visitor: after go-echarts has assembled the option,
// it turns it into plain JSON values, merges the raw overlay, and makes every string
// HTML-safe (go-echarts writes the option into the script with HTML escaping off).
type finisher struct {
	charts.BaseConfigurationVisitor
	overlay map[string]any
}

func (f finisher) Visit(obj map[string]any) {
	for k, v := range obj {
		obj[k] = plain(v)
	}
	deepMerge(obj, plain(f.overlay).(map[string]any))
	// Data labels that would be drawn over one another (a narrow chart's bar counts) hide
	// rather than overlap; the tooltip and the tables keep every value.
	if series, ok := obj["series"].([]any); ok {
		for _, s := range series {
			if m, ok := s.(map[string]any); ok && m["labelLayout"] == nil {
				m["labelLayout"] = map[string]any{"hideOverlap": true}
			}
		}
	}
	for k, v := range obj {
		obj[k] = protect(v)
	}
}

// plain converts go-echarts option structs into maps, slices and json.Number.
func plain(v any) any {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Every value here is built by this package from plain data; an encoding failure is
		// a programming error that tests catch.
		panic(fmt.Sprintf("charts: encode option: %v", err))
	}
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		panic(fmt.Sprintf("charts: decode option: %v", err))
	}
	return out
}

// deepMerge copies src into dst: maps merge key by key, arrays element by element, anything
// else replaces.
func deepMerge(dst, src map[string]any) {
	for k, sv := range src {
		dst[k] = mergeValue(dst[k], sv)
	}
}

func mergeValue(dv, sv any) any {
	switch s := sv.(type) {
	case map[string]any:
		if d, ok := dv.(map[string]any); ok {
			deepMerge(d, s)
			return d
		}
	case []any:
		if d, ok := dv.([]any); ok {
			for i, e := range s {
				if i < len(d) {
					d[i] = mergeValue(d[i], e)
				} else {
					d = append(d, e)
				}
			}
			return d
		}
	}
	return sv
}

// safeString marshals with <, > and & escaped as \u003c, \u003e, \u0026 even inside an encoder
// that has HTML escaping off, because the encoder keeps a Marshaler's bytes.
type safeString string

func (s safeString) MarshalJSON() ([]byte, error) { return json.Marshal(string(s)) }

func protect(v any) any {
	switch t := v.(type) {
	case string:
		if strings.HasPrefix(t, funcMarker) {
			return t // JavaScript written by this package, never caller data
		}
		return safeString(t)
	case map[string]any:
		for k, e := range t {
			t[k] = protect(e)
		}
	case []any:
		for i, e := range t {
			t[i] = protect(e)
		}
	}
	return v
}

// js marks a JavaScript function written in this package for go-echarts to emit unquoted.
// It must not contain double quotes (go-echarts JSON-encodes it first) nor caller data.
func js(code string) string {
	if strings.ContainsAny(code, "\"\\") {
		panic("charts: JavaScript for an option contains a double quote or backslash")
	}
	return string(opts.FuncOpts(code))
}

package markdown

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"html"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/maypok86/otter/v2"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	ghtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// Private-use characters mark what survives markdown untouched: the answer
// line (markOpen, markClose) and protected math spans (mathOpen, index,
// mathClose). They are removed from the model's text first.
const (
	markOpen  = '\uE000'
	markClose = '\uE001'
	mathOpen  = '\uE002'
	mathClose = '\uE003'
)

var (
	// completionMD renders model output: CommonMark with GitHub tables and
	// strikethrough, a line break where the model broke a line, raw HTML
	// and images shown as the text the model wrote (escapedNodes).
	completionMD = goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough),
		goldmark.WithRendererOptions(ghtml.WithHardWraps(),
			renderer.WithNodeRenderers(util.Prioritized(escapedNodes{}, 100))))

	// completionPolicy is the second wall: only the elements completionMD
	// writes, links with safe schemes that open elsewhere without referrer.
	completionPolicy = func() *bluemonday.Policy {
		p := bluemonday.NewPolicy()
		p.AllowStandardURLs()
		p.AllowElements("p", "br", "em", "strong", "del", "code", "pre", "blockquote", "ul", "ol", "li",
			"h1", "h2", "h3", "h4", "h5", "h6", "hr", "table", "thead", "tbody", "tr", "th", "td", "span")
		p.AllowAttrs("href").OnElements("a")
		p.AllowAttrs("start").Matching(regexp.MustCompile(`^[0-9]+$`)).OnElements("ol")
		p.AllowAttrs("class").Matching(regexp.MustCompile(`^(language-[A-Za-z0-9_+-]+|md-literal)$`)).OnElements("code", "span")
		p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|right|center)$`)).OnElements("th", "td")
		p.RequireNoReferrerOnLinks(true)
		p.RequireNoFollowOnLinks(true)
		p.AddTargetBlankToFullyQualifiedLinks(true)
		return p
	}()

	stripMarkers = strings.NewReplacer(string(markOpen), "", string(markClose), "", string(mathOpen), "", string(mathClose), "")
	stripMarks   = strings.NewReplacer(string(markOpen), "", string(markClose), "")
	markTags     = strings.NewReplacer(string(markOpen), `<mark class="answer-line">`, string(markClose), `</mark>`)

	// blockPrefix is what starts a markdown block on a line (heading,
	// list item, quote): the answer line's mark opens after it.
	blockPrefix = regexp.MustCompile(`^[ \t]*(?:(?:#{1,6}|[-*+]|[0-9]{1,9}[.)]|>)[ \t]+)*`)
)

// Completion renders a model's completion as sanitised HTML: markdown,
// with math ($…$, $$…$$, \(…\), \[…\]) left as the model wrote it for
// KaTeX in the browser, raw HTML and images shown as text, and the answer
// line (between before and after; none when line is "") inside
// <mark class="answer-line">. The text is before+line+after. An error
// comes only from goldmark; callers then show the text unrendered.
//
// Renders are remembered (up to renderCacheBytes of HTML, keyed by a hash
// of the three parts): a problem page shows the same 32 completions to
// everyone who opens it, and rendering is 1–2 ms each.
func Completion(before, line, after string) (string, error) {
	key := renderKey(before, line, after)
	if html, ok := renders.GetIfPresent(key); ok {
		return html, nil
	}
	html, err := render(before, line, after)
	if err != nil {
		return "", err
	}
	renders.Set(key, html)
	return html, nil
}

// renderCacheBytes bounds the remembered renders' HTML.
const renderCacheBytes = 32 << 20

var renders = otter.Must(&otter.Options[[sha256.Size]byte, string]{
	MaximumWeight: renderCacheBytes,
	Weigher:       func(_ [sha256.Size]byte, html string) uint32 { return uint32(min(len(html)+64, math.MaxUint32)) },
})

// renderKey hashes the parts with their lengths, so that no two different
// splits of one text share a key.
func renderKey(before, line, after string) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	for _, s := range []string{before, line, after} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// render is Completion without the cache.
func render(before, line, after string) (string, error) {
	before, line, after = stripMarkers.Replace(before), stripMarkers.Replace(line), stripMarkers.Replace(after)
	src := before
	if line != "" {
		p := blockPrefix.FindString(line)
		src += p + string(markOpen) + line[len(p):] + string(markClose)
	}
	src += after
	src, spans := protectMath(src)
	var buf bytes.Buffer
	if err := completionMD.Convert([]byte(src), &buf); err != nil {
		return "", fmt.Errorf("render completion: %w", err)
	}
	out := completionPolicy.Sanitize(buf.String())
	out = restoreMath(out, spans)
	if strings.Count(out, string(markOpen)) == 1 && strings.Count(out, string(markClose)) == 1 &&
		strings.Index(out, string(markOpen)) < strings.Index(out, string(markClose)) {
		out = markTags.Replace(out)
	} else {
		out = stripMarks.Replace(out)
	}
	return out, nil
}

// protectMath replaces each math span of s by mathOpen, its index and
// mathClose, so that markdown neither reads its _, * and \ nor splits it,
// and returns the spans. Inline $…$ follows pandoc's rule (as the page's
// KaTeX does): the opening $ is followed by a non-space, the closing $ is
// the next on the line, follows a non-space other than \ and is not
// followed by a digit, so that prices ("$5 and $7") stay text.
func protectMath(s string) (string, []string) {
	var out strings.Builder
	var spans []string
	keep := func(span string) {
		out.WriteRune(mathOpen)
		out.WriteString(strconv.Itoa(len(spans)))
		out.WriteRune(mathClose)
		spans = append(spans, span)
	}
	for i := 0; i < len(s); {
		end := -1
		switch {
		case strings.HasPrefix(s[i:], "$$"):
			if j := strings.Index(s[i+2:], "$$"); j > 0 {
				end = i + 2 + j + 2
			}
		case strings.HasPrefix(s[i:], `\[`):
			if j := strings.Index(s[i+2:], `\]`); j >= 0 {
				end = i + 2 + j + 2
			}
		case strings.HasPrefix(s[i:], `\(`):
			if j := strings.Index(s[i+2:], `\)`); j >= 0 {
				end = i + 2 + j + 2
			}
		case s[i] == '$' && (i == 0 || s[i-1] != '\\'):
			end = inlineDollar(s, i)
		case s[i] == '\\' && i+1 < len(s):
			out.WriteString(s[i : i+2]) // an escaped character (\$) is not a delimiter
			i += 2
			continue
		}
		if end < 0 {
			out.WriteByte(s[i])
			i++
			continue
		}
		keep(s[i:end])
		i = end
	}
	return out.String(), spans
}

// inlineDollar returns the end of the $…$ span opening at s[i], or -1.
func inlineDollar(s string, i int) int {
	if i+1 >= len(s) || s[i+1] == ' ' || s[i+1] == '\t' || s[i+1] == '\n' || s[i+1] == '$' {
		return -1
	}
	j := strings.IndexAny(s[i+1:], "$\n")
	if j < 0 || s[i+1+j] != '$' {
		return -1
	}
	c := i + 1 + j // the closing $
	if p := s[c-1]; p == ' ' || p == '\t' || p == '\\' {
		return -1
	}
	if c+1 < len(s) && s[c+1] >= '0' && s[c+1] <= '9' {
		return -1
	}
	return c + 1
}

// restoreMath puts the protected spans back, HTML-escaped (they were
// never HTML), without the answer line's marks (a mark inside a span
// would split it for KaTeX).
func restoreMath(s string, spans []string) string {
	if len(spans) == 0 {
		return s
	}
	var out strings.Builder
	out.Grow(len(s) + len(s)/4)
	for {
		i := strings.IndexRune(s, mathOpen)
		if i < 0 {
			out.WriteString(s)
			return out.String()
		}
		out.WriteString(s[:i])
		s = s[i+len(string(mathOpen)):]
		j := strings.IndexRune(s, mathClose)
		if j < 0 {
			return out.String()
		}
		if n, err := strconv.Atoi(s[:j]); err == nil && n < len(spans) {
			out.WriteString(html.EscapeString(stripMarks.Replace(spans[n])))
		}
		s = s[j+len(string(mathClose)):]
	}
}

// escapedNodes renders raw HTML and images as the text the model wrote:
// model output is not markup Reach runs or loads.
type escapedNodes struct{}

func (escapedNodes) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			segs := n.(*ast.RawHTML).Segments
			for i := range segs.Len() {
				seg := segs.At(i)
				literal(w, seg.Value(src))
			}
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(ast.KindHTMLBlock, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			b := n.(*ast.HTMLBlock)
			_, _ = w.WriteString("<p>")
			lines := b.Lines()
			for i := range lines.Len() {
				seg := lines.At(i)
				literal(w, bytes.TrimRight(seg.Value(src), "\n"))
				if i < lines.Len()-1 || b.HasClosure() {
					_, _ = w.WriteString("<br>\n")
				}
			}
			if b.HasClosure() {
				literal(w, bytes.TrimRight(b.ClosureLine.Value(src), "\n"))
			}
			_, _ = w.WriteString("</p>\n")
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(ast.KindImage, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			img := n.(*ast.Image)
			var alt bytes.Buffer
			for c := img.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*ast.Text); ok {
					alt.Write(t.Segment.Value(src))
				}
			}
			literal(w, []byte("!["+alt.String()+"]("+string(img.Destination)+")"))
		}
		return ast.WalkSkipChildren, nil
	})
}

// literal writes text the model wrote as visible text.
func literal(w util.BufWriter, b []byte) {
	_, _ = w.WriteString(`<span class="md-literal">`)
	_, _ = w.WriteString(html.EscapeString(string(b)))
	_, _ = w.WriteString(`</span>`)
}

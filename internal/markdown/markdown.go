// Package markdown renders text people write (notes on a comparison) as
// HTML that is safe to put into a page: goldmark parses CommonMark with
// GitHub's tables, strikethrough and autolinks, and bluemonday's
// user-generated-content policy then keeps only harmless elements and
// attributes (no scripts, no event handlers, no javascript: URLs, no
// inline styles the CSP would refuse anyway). Images become links: the
// page's Content-Security-Policy blocks images from elsewhere (they showed
// broken), and a note must not make readers' browsers fetch a URL.
package markdown

import (
	"bytes"
	"fmt"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

var (
	// md leaves raw HTML out (goldmark's default without html.WithUnsafe):
	// the sanitiser below is the second wall, not the only one.
	md = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify),
		// Before goldmark's own HTML renderer (priority 1000), so its image
		// rendering is replaced.
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(imageLinks{}, 100))))

	policy = func() *bluemonday.Policy {
		p := bluemonday.UGCPolicy()
		p.RequireNoReferrerOnLinks(true)
		p.AddTargetBlankToFullyQualifiedLinks(true)
		return p
	}()
)

// Render returns src (markdown) as sanitised HTML. It fails only if
// goldmark does, which it does not on any string; the error is there so a
// caller never shows unsanitised text.
func Render(src string) (string, error) {
	var buf bytes.Buffer
	if err := md.Convert([]byte(src), &buf); err != nil {
		return "", fmt.Errorf("render markdown: %w", err)
	}
	return policy.Sanitize(buf.String()), nil
}

// imageLinks renders ![alt](url) as a link "image: alt" to url.
type imageLinks struct{}

func (imageLinks) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindImage, renderImage)
}

func renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Image)
	if !entering {
		_, _ = w.WriteString("</a>")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<a href="`)
	if !html.IsDangerousURL(n.Destination) {
		_, _ = w.Write(util.EscapeHTML(util.URLEscape(n.Destination, true)))
	}
	_, _ = w.WriteString(`">image: `)
	if !n.HasChildren() { // no alt text: name the image by its address
		_, _ = w.Write(util.EscapeHTML(n.Destination))
	}
	return ast.WalkContinue, nil
}

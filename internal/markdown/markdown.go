// Package markdown renders text people write (notes on a comparison) as
// HTML that is safe to put into a page: goldmark parses CommonMark with
// GitHub's tables, strikethrough and autolinks, and bluemonday's
// user-generated-content policy then keeps only harmless elements and
// attributes (no scripts, no event handlers, no javascript: URLs, no
// inline styles the CSP would refuse anyway).
package markdown

import (
	"bytes"
	"fmt"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

var (
	// md leaves raw HTML out (goldmark's default without html.WithUnsafe):
	// the sanitiser below is the second wall, not the only one.
	md = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify))

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

package views

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/a-h/templ"

	"github.com/reach-lab/reach/internal/markdown"
	"github.com/reach-lab/reach/internal/store"
)

// Viewer is who is looking at a page, for the page frame (navigation,
// sign-out) and for hiding controls a role cannot use.
type Viewer struct {
	SignedIn bool
	Email    string
	Admin    bool
	// Creator says whether the viewer may create a comparison (an editor
	// of some project). It is asked only by pages that render the
	// navigation, so JSON and downloads pay no query; nil means yes.
	Creator func() bool
}

// CanCreate reports whether the navigation offers uploading and sampling.
func (v Viewer) CanCreate() bool { return v.Admin || v.Creator == nil || v.Creator() }

type viewerKey struct{}

// WithViewer returns ctx carrying v for the views rendered with it.
func WithViewer(ctx context.Context, v Viewer) context.Context {
	return context.WithValue(ctx, viewerKey{}, v)
}

// ViewerOf returns the Viewer in ctx (the zero Viewer: signed out).
func ViewerOf(ctx context.Context) Viewer {
	v, _ := ctx.Value(viewerKey{}).(Viewer)
	return v
}

// Perms says what the viewer may do to the comparison on the page.
type Perms struct {
	Edit   bool // upload, re-verify, review, override verdicts
	Manage bool // share links, delete
}

// DatasetLabel names a loaded dataset in a form's list so that two of one
// name can be told apart: its name, the file it was read from (when the
// name is not that file's), its problem count, when it was loaded (UTC)
// and the projects it comes from.
func DatasetLabel(d store.Dataset) string {
	s := d.Name
	if d.SourceFile != "" && d.SourceFile != d.Name {
		s += " (from " + d.SourceFile + ")"
	}
	s += fmt.Sprintf(" · %d problems · loaded %s", d.ProblemCount, d.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	if len(d.Projects) > 0 {
		s += " · " + strings.Join(d.Projects, ", ")
	}
	return s
}

// completionMarkdown renders a math completion as sanitised markdown with
// its math left for KaTeX and its answer line marked (see answerLine);
// ok is false when it cannot, and the raw text then shows alone.
func completionMarkdown(text, answer string) (templ.Component, bool) {
	before, line, after, ok := answerLine(text, answer)
	if !ok {
		before, line, after = text, "", ""
	}
	html, err := markdown.Completion(before, line, after)
	if err != nil {
		slog.Warn("render completion markdown", "err", err)
		return nil, false
	}
	return templ.Raw(html), true
}

package views

import (
	"context"
	"fmt"
	"strings"

	"github.com/reach-lab/reach/internal/store"
)

// Viewer is who is looking at a page, for the page frame (navigation,
// sign-out) and for hiding controls a role cannot use.
type Viewer struct {
	SignedIn bool
	Email    string
	Admin    bool
}

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

// DatasetLabel names a loaded dataset in a form's list: its name, size and
// the projects it comes from.
func DatasetLabel(d store.Dataset) string {
	s := fmt.Sprintf("%s (%d problems)", d.Name, d.ProblemCount)
	if len(d.Projects) > 0 {
		s += " · " + strings.Join(d.Projects, ", ")
	}
	return s
}

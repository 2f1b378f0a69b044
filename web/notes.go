package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/reach-lab/reach/internal/markdown"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// noteView reads a comparison's notes and renders them sanitised.
func (s *Server) noteView(ctx context.Context, comparisonID int64) (views.NoteView, error) {
	n, err := s.st.GetNote(ctx, comparisonID)
	if err != nil {
		return views.NoteView{}, err
	}
	return noteViewOf(n)
}

// noteViewOf is noteView of a note already read.
func noteViewOf(n store.Note) (views.NoteView, error) {
	comparisonID := n.ComparisonID
	var err error
	v := views.NoteView{N: n}
	if n.Body != "" {
		if v.HTML, err = markdown.Render(n.Body); err != nil {
			return v, fmt.Errorf("notes of comparison %d: %w", comparisonID, err)
		}
	}
	return v, nil
}

// noteHTML is a comparison's notes as sanitised HTML ("" without notes).
func (s *Server) noteHTML(ctx context.Context, comparisonID int64) (string, error) {
	v, err := s.noteView(ctx, comparisonID)
	return v.HTML, err
}

// notesPage is the notes editor (GET /comparisons/{id}/notes, editors).
func (s *Server) notesPage(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	n, err := s.noteView(r.Context(), c.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.NotesEdit(views.NoteEditView{C: c, Body: n.N.Body, Preview: n.HTML}))
}

// saveNotes replaces the notes (form: body; empty deletes them) and goes
// back to the comparison page. Notes over store.MaxNoteBytes are refused
// with the editor still holding them.
func (s *Server) saveNotes(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok || !s.parseForm(w, r) {
		return
	}
	if _, ok := r.PostForm["body"]; !ok {
		// A client that misnames the field must not wipe the notes: an empty
		// note is saved only from an explicit, empty body field.
		http.Error(w, "the form has no body field: send the notes as body (an empty body deletes them)", http.StatusBadRequest)
		return
	}
	// Browsers send CRLF from a textarea; store what people typed.
	body := strings.ReplaceAll(r.PostForm.Get("body"), "\r\n", "\n")
	if strings.TrimSpace(body) == "" {
		body = ""
	}
	if len(body) > store.MaxNoteBytes {
		n, err := s.noteView(r.Context(), c.ID)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		s.render(w, r, http.StatusBadRequest, views.NotesEdit(views.NoteEditView{C: c, Body: body, Preview: n.HTML,
			Error: fmt.Sprintf("These notes are %d bytes; notes are at most %d KiB (%d bytes). Shorten them: nothing was saved.",
				len(body), store.MaxNoteBytes>>10, store.MaxNoteBytes)}))
		return
	}
	if err := s.st.SetNote(r.Context(), c.ID, body, currentUser(r).ID); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/comparisons/%d#notes", c.ID), http.StatusSeeOther)
}

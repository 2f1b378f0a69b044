package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/reach-lab/reach/internal/follow"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// followEvery is how often a followed folder is looked at.
func (s *Server) followEvery() time.Duration {
	if s.cfg.FollowEvery > 0 {
		return s.cfg.FollowEvery
	}
	return follow.DefaultEvery
}

// followView is what a comparison's pages show of its following of a
// server folder (canEdit: the viewer may start or stop it).
func (s *Server) followView(ctx context.Context, c store.Comparison, canEdit bool) (views.FollowView, error) {
	f, err := s.st.LatestFollow(ctx, c.ID)
	return s.followViewOf(ctx, c, canEdit, f, err)
}

// followViewOf is followView of the comparison's latest follow already
// read (f and err as LatestFollow returned them).
func (s *Server) followViewOf(ctx context.Context, c store.Comparison, canEdit bool, f store.Follow, err error) (views.FollowView, error) {
	v := views.FollowView{C: c, CanEdit: canEdit}
	switch {
	case err == nil:
		v.F = &f
		for _, r := range c.Runs {
			if r.Step != nil && r.ModelName == follow.CheckpointName(f.ModelName, *r.Step) {
				v.StepsIn++
			}
		}
	case !errors.Is(err, store.ErrNotFound):
		return v, err
	}
	if canEdit {
		if v.Roots, err = follow.Roots(ctx, s.st); err != nil {
			return v, err
		}
	}
	return v, nil
}

// followPage shows the form that makes a comparison follow a server
// folder, or what its following is doing.
func (s *Server) followPage(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	v, err := s.followView(r.Context(), c, perms(routeRole(r)).Edit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v.Here = true
	s.render(w, r, http.StatusOK, views.FollowPage(v))
}

// startFollow makes the comparison follow the folder (POST model, path):
// it must lie inside a folder an admin allows (follow.Resolve).
func (s *Server) startFollow(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok || !s.parseForm(w, r) {
		return
	}
	model, path := strings.TrimSpace(r.PostForm.Get("model")), strings.TrimSpace(r.PostForm.Get("path"))
	err := firstTooLong(lenCheck{"Model name", model, maxName}, lenCheck{"Folder", path, follow.MaxPathBytes})
	if err == nil && model == "" {
		err = badForm("give the model a name: its checkpoints are named NAME step N")
	}
	if err == nil {
		err = follow.Start(r.Context(), s.st, s.jobs, c.ID, model, path, s.followEvery(), currentUser(r).ID)
	}
	if err != nil && !fromDatabase(err) || errors.Is(err, store.ErrFollowing) {
		v, verr := s.followView(r.Context(), c, true)
		if verr != nil {
			s.fail(w, r, verr)
			return
		}
		v.Error, v.Model, v.Path, v.Here = "Not followed: "+err.Error(), model, path, true
		s.render(w, r, http.StatusBadRequest, views.FollowPage(v))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("following a server folder", "comparison", c.ID, "path", path, "by", currentUser(r).Email)
	http.Redirect(w, r, fmt.Sprintf("/comparisons/%d/follow", c.ID), http.StatusSeeOther)
}

// stopFollow stops the comparison's following; every checkpoint that went
// in stays.
func (s *Server) stopFollow(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	stopped, err := s.st.StopFollow(r.Context(), c.ID, "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if stopped {
		s.log.Info("stopped following a server folder", "comparison", c.ID, "by", currentUser(r).Email)
	}
	http.Redirect(w, r, fmt.Sprintf("/comparisons/%d", c.ID), http.StatusSeeOther)
}

// foldersPage is the admin page of the server folders comparisons may
// follow.
func (s *Server) foldersPage(w http.ResponseWriter, r *http.Request) {
	text, err := follow.RootsText(r.Context(), s.st)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	roots, perr := follow.ParseRoots(text)
	v := views.FoldersView{Text: text, Roots: roots}
	if perr != nil {
		v.Error = "The stored list no longer holds: " + perr.Error() + ". Following is off until it is fixed."
	}
	s.render(w, r, http.StatusOK, views.FoldersPage(v))
}

// setFolders stores the allowed server folders (POST roots, one absolute
// path a line).
func (s *Server) setFolders(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	text := strings.ReplaceAll(r.PostForm.Get("roots"), "\r\n", "\n")
	err := follow.SaveRoots(r.Context(), s.st, text, currentUser(r).ID)
	if err != nil && !fromDatabase(err) {
		s.render(w, r, http.StatusBadRequest, views.FoldersPage(views.FoldersView{Text: truncate(text, follow.MaxRootsText), Error: "Not saved: " + err.Error()}))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	roots, _ := follow.ParseRoots(text)
	s.log.Info("server folders to follow changed", "by", currentUser(r).Email, "folders", roots)
	s.render(w, r, http.StatusOK, views.FoldersPage(views.FoldersView{Text: text, Roots: roots, Saved: true}))
}

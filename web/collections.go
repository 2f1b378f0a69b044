package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/auth"
	"github.com/reach-lab/reach/internal/charts"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// needCollection guards /collections/{id}/… like needComparison: the
// caller's role in the collection's project decides; a collection outside
// the caller's projects is not found.
func (s *Server) needCollection(p auth.Perm) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, err := idParam(r, "id")
			var c store.Collection
			if err == nil {
				c, err = s.st.GetCollection(r.Context(), id)
			}
			if errors.Is(err, store.ErrNotFound) {
				s.deny(w, r, http.StatusNotFound, "There is no such collection.")
				return
			}
			if err != nil {
				s.fail(w, r, err)
				return
			}
			u := currentUser(r)
			member, err := s.st.RoleIn(r.Context(), c.ProjectID, u.ID)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			rl := role(u, member)
			if !rl.Allows(auth.Read) {
				s.deny(w, r, http.StatusNotFound, "There is no such collection.")
				return
			}
			if !rl.Allows(p) {
				s.deny(w, r, http.StatusForbidden, "Your role in this collection's project ("+rl.String()+") does not allow this.")
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), roleKey, rl)))
		})
	}
}

func (s *Server) collectionsPage(w http.ResponseWriter, r *http.Request) {
	s.renderCollections(w, r, http.StatusOK, "")
}

func (s *Server) renderCollections(w http.ResponseWriter, r *http.Request, status int, msg string) {
	u := currentUser(r)
	cs, err := s.st.CollectionsFor(r.Context(), u.ID, u.IsAdmin)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ps, err := s.editableProjects(r.Context(), u)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, status, views.CollectionsPage(cs, ps, msg))
}

// createCollection makes an empty collection (form: name, project_id) in a
// project the caller edits and opens it.
func (s *Server) createCollection(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	name := strings.TrimSpace(r.PostForm.Get("name"))
	if name == "" {
		s.renderCollections(w, r, http.StatusBadRequest, "Give the collection a name.")
		return
	}
	if err := tooLong("Collection name", name, maxName); err != nil {
		s.renderCollections(w, r, http.StatusBadRequest, err.Error())
		return
	}
	pid, err := strconv.ParseInt(r.PostForm.Get("project_id"), 10, 64)
	if err != nil {
		s.renderCollections(w, r, http.StatusBadRequest, "Choose a project.")
		return
	}
	ps, err := s.editableProjects(r.Context(), currentUser(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ok := false
	for _, p := range ps {
		ok = ok || p.ID == pid
	}
	if !ok {
		s.deny(w, r, http.StatusForbidden, "You are not an editor of that project.")
		return
	}
	id, err := s.st.CreateCollection(r.Context(), pid, name, currentUser(r).ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/collections/%d", id), http.StatusSeeOther)
}

// collectionPage shows a collection: its comparisons, the overlay of every
// model's pass@k curve and a summary table, all from the cached reports.
func (s *Server) collectionPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, _ := idParam(r, "id")
	c, err := s.st.GetCollection(ctx, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ids, err := s.st.CollectionComparisons(ctx, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := views.CollectionView{C: c, Edit: routeRole(r).Allows(auth.Edit)}
	in := charts.CrossoverInput{Title: "pass@k of every model"}
	member := map[int64]bool{}
	for _, cid := range ids {
		member[cid] = true
		cmp, err := s.st.GetComparison(ctx, cid)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		item := views.CollectionItem{ID: cid, Name: cmp.Name, Status: cmp.Status}
		if cmp.Status == store.StatusReady {
			e, err := s.reports.Get(ctx, cid, analysis.Options{})
			if err != nil {
				s.fail(w, r, err)
				return
			}
			for _, m := range e.Report.Models {
				row := views.CollectionRow{Comparison: cmp.Name, ComparisonID: cid, Model: m.Name, N: m.N, Pass1: m.Pass1, PassMax: m.PassN, KStar: "—"}
				if m.Crossover != nil && m.Crossover.Found {
					row.KStar = m.Crossover.Label
				}
				v.Rows = append(v.Rows, row)
				if len(m.PassAtK) > 0 {
					in.Series = append(in.Series, curveSeries(cmp.Name+" · "+m.Name, m.PassAtK, nil))
				}
			}
		}
		v.Items = append(v.Items, item)
	}
	if len(in.Series) > 0 {
		snip, err := charts.Crossover(fmt.Sprintf("k%d", id), in)
		if err != nil {
			s.fail(w, r, fmt.Errorf("collection %d overlay: %w", id, err))
			return
		}
		v.Overlay = chart(snip)
	}
	if v.Edit {
		u := currentUser(r)
		all, err := s.st.ListComparisonsFor(ctx, u.ID, u.IsAdmin)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		for _, cs := range all {
			if cs.ProjectID == c.ProjectID && cs.Status == store.StatusReady && !member[cs.ID] {
				v.Addable = append(v.Addable, cs)
			}
		}
	}
	s.render(w, r, http.StatusOK, views.CollectionPage(v))
}

// collectionEdit adds (add) or removes a comparison (form: comparison_id)
// of the collection's project; any other comparison is not found.
func (s *Server) collectionEdit(add bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, _ := idParam(r, "id")
		if !s.parseForm(w, r) {
			return
		}
		cid, err := strconv.ParseInt(r.PostForm.Get("comparison_id"), 10, 64)
		if err != nil {
			s.deny(w, r, http.StatusBadRequest, "Choose a comparison.")
			return
		}
		if add {
			err = s.st.AddToCollection(r.Context(), id, cid)
		} else {
			err = s.st.RemoveFromCollection(r.Context(), id, cid)
		}
		if errors.Is(err, store.ErrNotFound) {
			s.deny(w, r, http.StatusNotFound, "There is no such comparison in this collection's project.")
			return
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/collections/%d", id), http.StatusSeeOther)
	}
}

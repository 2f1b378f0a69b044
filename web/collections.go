package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

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

// collectionView builds a collection's comparisons, overlay of every
// model's pass@k curve and summary table, all from the cached reports.
func (s *Server) collectionView(ctx context.Context, c store.Collection) (views.CollectionView, error) {
	v := views.CollectionView{C: c}
	ids, err := s.st.CollectionComparisons(ctx, c.ID)
	if err != nil {
		return v, err
	}
	in := charts.CrossoverInput{Title: "pass@k of every model"}
	// A model keeps one colour across the collection (by name, in order of
	// first appearance: the base model of the first comparison gets the base
	// colour of the comparison pages); the comparisons differ by line and
	// marker.
	colour := map[string]int{}
	for ci, cid := range ids {
		cmp, err := s.st.GetComparison(ctx, cid)
		if err != nil {
			return v, err
		}
		item := views.CollectionItem{ID: cid, Name: cmp.Name, Status: cmp.Status}
		if cmp.Status == store.StatusReady {
			e, err := s.reports.Get(ctx, cid, analysis.Options{})
			if errors.Is(err, analysis.ErrNoData) {
				// One comparison without figures leaves the others drawn.
				item.NoFigures = err.Error()
				v.Items = append(v.Items, item)
				continue
			}
			if err != nil {
				return v, err
			}
			for _, m := range e.Report.Models {
				row := views.CollectionRow{Comparison: cmp.Name, ComparisonID: cid, Model: m.Name, N: m.N, Pass1: m.Pass1, PassMax: m.PassN, KStar: "—"}
				if m.Crossover != nil && m.Crossover.Found {
					row.KStar = m.Crossover.Label
				}
				if len(m.PassAtK) > 0 {
					if _, ok := colour[m.Name]; !ok {
						colour[m.Name] = len(colour) + 1
					}
					row.Colour = charts.Colour(colour[m.Name] - 1)
					cs := curveSeries(cmp.Name+" · "+m.Name, m.PassAtK, nil)
					cs.Color = colour[m.Name]
					cs.Dashed, cs.Dotted = ci%3 == 1, ci%3 == 2
					cs.Symbol = charts.Symbols[ci%len(charts.Symbols)]
					in.Series = append(in.Series, cs)
				}
				v.Rows = append(v.Rows, row)
			}
		}
		v.Items = append(v.Items, item)
	}
	if len(in.Series) > 0 {
		snip, err := charts.Crossover(fmt.Sprintf("k%d", c.ID), in)
		if err != nil {
			return v, fmt.Errorf("collection %d overlay: %w", c.ID, err)
		}
		v.Overlay = chart(snip)
	}
	return v, nil
}

// collectionPage shows a collection (collectionView) with, for editors,
// the controls to add, remove and reorder comparisons, rename and delete.
func (s *Server) collectionPage(w http.ResponseWriter, r *http.Request) {
	s.renderCollection(w, r, http.StatusOK, "")
}

// renderCollection renders the collection page with msg (a refused
// edit's reason, or "").
func (s *Server) renderCollection(w http.ResponseWriter, r *http.Request, status int, msg string) {
	ctx := r.Context()
	id, _ := idParam(r, "id")
	c, err := s.st.GetCollection(ctx, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.collectionView(ctx, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rl := routeRole(r)
	v.Edit, v.Manage = rl.Allows(auth.Edit), rl.Allows(auth.Manage)
	v.Msg = msg
	if v.Edit {
		member := map[int64]bool{}
		for _, it := range v.Items {
			member[it.ID] = true
		}
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
	s.render(w, r, status, views.CollectionPage(v))
}

// moveInCollection moves a comparison (form: comparison_id) one place up
// or down (form: dir = up | down).
func (s *Server) moveInCollection(w http.ResponseWriter, r *http.Request) {
	id, _ := idParam(r, "id")
	if !s.parseForm(w, r) {
		return
	}
	cid, err := strconv.ParseInt(r.PostForm.Get("comparison_id"), 10, 64)
	if err != nil {
		s.deny(w, r, http.StatusBadRequest, "Choose a comparison.")
		return
	}
	delta := map[string]int{"up": -1, "down": 1}[r.PostForm.Get("dir")]
	if delta == 0 {
		s.deny(w, r, http.StatusBadRequest, "Move a comparison up or down.")
		return
	}
	err = s.st.MoveInCollection(r.Context(), id, cid, delta)
	if errors.Is(err, store.ErrNotFound) {
		s.deny(w, r, http.StatusNotFound, "There is no such comparison in this collection.")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/collections/%d#collection-items", id), http.StatusSeeOther)
}

// renameCollection renames a collection (form: name).
func (s *Server) renameCollection(w http.ResponseWriter, r *http.Request) {
	id, _ := idParam(r, "id")
	if !s.parseForm(w, r) {
		return
	}
	name := strings.TrimSpace(r.PostForm.Get("name"))
	msg := ""
	if name == "" {
		msg = "Give the collection a name."
	} else if err := tooLong("Collection name", name, maxName); err != nil {
		msg = err.Error()
	}
	if msg != "" {
		s.renderCollection(w, r, http.StatusBadRequest, msg)
		return
	}
	if err := s.st.RenameCollection(r.Context(), id, name); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/collections/%d", id), http.StatusSeeOther)
}

// deleteCollectionConfirm asks before a collection is deleted, saying
// what goes (the collection and its share links) and what stays (its
// comparisons).
func (s *Server) deleteCollectionConfirm(w http.ResponseWriter, r *http.Request) {
	id, _ := idParam(r, "id")
	c, err := s.st.GetCollection(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ids, err := s.st.CollectionComparisons(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ls, err := s.st.ListCollectionShares(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	live := 0
	for _, l := range ls {
		if l.Live(time.Now()) {
			live++
		}
	}
	s.render(w, r, http.StatusOK, views.CollectionDeleteConfirm(c, len(ids), live))
}

func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request) {
	id, _ := idParam(r, "id")
	if err := s.st.DeleteCollection(r.Context(), id); err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("collection deleted", "collection", id, "user", currentUser(r).ID)
	http.Redirect(w, r, "/collections", http.StatusSeeOther)
}

// collectionSharesPage lists a collection's share links with the form to
// make one (owners of its project).
func (s *Server) collectionSharesPage(w http.ResponseWriter, r *http.Request) {
	s.renderCollectionShares(w, r, http.StatusOK, views.NewShare{})
}

func (s *Server) renderCollectionShares(w http.ResponseWriter, r *http.Request, status int, ns views.NewShare) {
	id, _ := idParam(r, "id")
	c, err := s.st.GetCollection(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ls, err := s.st.ListCollectionShares(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ns.URL != "" {
		w.Header().Set("Cache-Control", "no-store")
	}
	s.render(w, r, status, views.CollectionSharesPage(views.CollectionSharesView{C: c, Links: ls, New: ns, Now: time.Now()}))
}

// createCollectionShare makes a read-only link to a collection's overlay
// and table (form: label, expires_days).
func (s *Server) createCollectionShare(w http.ResponseWriter, r *http.Request) {
	id, _ := idParam(r, "id")
	if !s.parseForm(w, r) {
		return
	}
	req, err := shareFormRequest(r)
	req.Chart, req.ShowTexts, req.ShowNotes, req.View = "", false, false, "" // a collection's link shows its chart and table only
	var l store.ShareLink
	if err == nil {
		l, err = req.link(currentUser(r).ID)
	}
	var sid int64
	var u string
	if err == nil {
		l.CollectionID = id
		sid, u, err = s.saveShare(r, l)
	}
	ns := views.NewShare{Label: req.Label}
	var fe formError
	if errors.As(err, &fe) {
		ns.Error = fe.msg
		s.renderCollectionShares(w, r, http.StatusBadRequest, ns)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("collection shared", "collection", id, "share", sid, "user", currentUser(r).ID)
	ns.ID, ns.URL = sid, u
	s.renderCollectionShares(w, r, http.StatusOK, ns)
}

// sharedCollection is a collection's share page: its overlay and table,
// read-only, without links into the instance.
func (s *Server) sharedCollection(w http.ResponseWriter, r *http.Request, l store.ShareLink) {
	c, err := s.st.GetCollection(r.Context(), l.CollectionID)
	if errors.Is(err, store.ErrNotFound) {
		s.render(w, r, http.StatusNotFound, views.SharedGone())
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.collectionView(r.Context(), c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	u := s.baseURL(r) + "/s/" + chiParam(r, "token")
	if s.fixed != nil {
		u = "" // a bundle has no address
	}
	s.render(w, r, http.StatusOK, views.SharedCollection(v, u))
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

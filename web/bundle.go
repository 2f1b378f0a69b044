package web

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/reach-lab/reach/internal/bundle"
	"github.com/reach-lab/reach/web/views"

	"github.com/reach-lab/reach/internal/export"
	"github.com/reach-lab/reach/internal/jobs"

	"github.com/go-chi/chi/v5"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/store"
)

// BundleToken is the share token the pages of BundleHandler are under:
// /s/bundle/ is the comparison, /s/bundle/problems/{pid} its problems.
const BundleToken = "bundle"

// BundleOptions bound what a bundle of a comparison holds.
type BundleOptions struct {
	// CountsOnly leaves out problem statements and completions: the
	// figures, charts and the problem table's counts only.
	CountsOnly bool
	// MaxSamples caps the completions each problem page shows per model
	// (0: the problem page's usual samplesShown).
	MaxSamples int
}

// BundleHandler serves comparison id read-only, as a share link with its
// texts (unless o.CountsOnly) and notes would, at /s/bundle/..., and the
// static assets at /static/: what internal/bundle copies into an offline
// folder. No share link is stored: the link is this handler's own, so no
// token exists that could outlive the bundle. Its comparison page also
// lists every problem (a share link lists the base-only ones).
func BundleHandler(st *store.Store, cfg Config, log *slog.Logger, id int64, o BundleOptions) http.Handler {
	s := &Server{st: st, cfg: cfg, log: log, reports: analysis.NewCache(st, 0)}
	return s.bundleOf(id, o)
}

// bundleRoutes are the routes of a bundle: the shared pages, their data
// and texts, and the static assets.
func (s *Server) bundleRoutes() http.Handler {
	r := chi.NewRouter()
	r.Handle("/static/*", http.StripPrefix("/static/", staticHandler()))
	r.Route("/s/{token}", func(r chi.Router) {
		r.Get("/", s.sharedPage)
		r.Get("/problems/{pid}", s.sharedProblem)
		r.Get("/runs/{rid}/problems/{pid}/samples/{idx}/text", s.sharedSampleText)
		r.Get("/data/{chart}", s.sharedChartData)
		r.Get("/samples.jsonl", s.bundleSamplesExport)
	})
	return r
}

// bundleSamplesExport is the bundle's samples export: every sample with its
// verdict, as JSON lines (not capped by MaxSamples: it is the data).
func (s *Server) bundleSamplesExport(w http.ResponseWriter, r *http.Request) {
	if !s.fixed.ShowTexts {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	if err := export.Comparison(r.Context(), w, s.st, s.fixed.ComparisonID, "jsonl"); err != nil {
		s.fail(w, r, err)
	}
}

// bundleOf is the bundle handler of comparison id on this server.
func (s *Server) bundleOf(id int64, o BundleOptions) http.Handler {
	b := &Server{st: s.st, cfg: s.cfg, log: s.log, reports: s.reports,
		fixed: &store.ShareLink{ComparisonID: id, ShowTexts: !o.CountsOnly, ShowNotes: true}, bundleSamples: o.MaxSamples}
	mux := b.bundleRoutes()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A request made while serving another (the bundle page) carries
		// that one's routing: chi would route it as a subrouter's.
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, nil)))
	})
}

// bundleQuery reads a bundle's options from the query: max (completions
// per model on a problem page, default 16) and counts=on.
func bundleQuery(r *http.Request) (BundleOptions, error) {
	o := BundleOptions{MaxSamples: samplesShown, CountsOnly: r.URL.Query().Get("counts") == "on"}
	if m := r.URL.Query().Get("max"); m != "" {
		n, err := strconv.Atoi(m)
		if err != nil || n < 1 || n > 1000 {
			return o, badForm("max %q: want 1 to 1000 completions per model", m)
		}
		o.MaxSamples = n
	}
	return o, nil
}

// bundleRequest reads the comparison and the bundle options a bundle page
// or download names; false when it has answered the request (not found, a
// bad option).
func (s *Server) bundleRequest(w http.ResponseWriter, r *http.Request) (int64, store.Comparison, BundleOptions, bool) {
	id, _ := idParam(r, "id")
	c, err := s.st.GetComparison(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return 0, c, BundleOptions{}, false
	}
	o, err := bundleQuery(r)
	var fe formError
	if errors.As(err, &fe) {
		s.deny(w, r, http.StatusBadRequest, fe.msg)
		return 0, c, BundleOptions{}, false
	}
	return id, c, o, true
}

// bundlePage states what a bundle with the query's options holds and its
// size (by writing it to nowhere), with the download button.
func (s *Server) bundlePage(w http.ResponseWriter, r *http.Request) {
	id, c, o, ok := s.bundleRequest(w, r)
	if !ok {
		return
	}
	v := views.BundleView{C: c, CountsOnly: o.CountsOnly, MaxSamples: o.MaxSamples}
	if c.Status != store.StatusReady {
		v.Error = "The comparison is " + string(c.Status) + ": it can be bundled once it is ready."
		s.render(w, r, http.StatusOK, views.BundlePage(v))
		return
	}
	// The intervals are computed once, on demand: start them now so that
	// a download a minute later has them.
	if e, err := s.reports.Get(r.Context(), id, analysis.Options{}); err == nil && e.Report.Stats.Status == analysis.StatsPending && s.jobs != nil {
		v.StatsPending = true
		if err := jobs.StartStats(r.Context(), s.jobs, id); err != nil {
			s.log.Warn("enqueue statistics", "comparison", id, "err", err)
		}
	}
	st, err := bundle.Write(r.Context(), s.bundleOf(id, o), BundleToken, bundle.Discard{})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v.Pages, v.Files, v.Size = st.Pages, st.Files, bundle.Size(st.Bytes)
	s.render(w, r, http.StatusOK, views.BundlePage(v))
}

// bundleZip streams the bundle as a zip whose files are under one folder,
// reach-comparison-{id}/.
func (s *Server) bundleZip(w http.ResponseWriter, r *http.Request) {
	id, c, o, ok := s.bundleRequest(w, r)
	if !ok {
		return
	}
	if c.Status != store.StatusReady {
		s.deny(w, r, http.StatusConflict, "The comparison is not ready: it can be bundled once it is.")
		return
	}
	top := fmt.Sprintf("reach-comparison-%d", id)
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+top+`.zip"`)
	zw := zip.NewWriter(w)
	if _, err := bundle.Write(r.Context(), s.bundleOf(id, o), BundleToken, bundle.Zip{W: zw, Top: top}); err != nil {
		// The status line is sent: log, and leave the archive without its
		// directory so that it does not open as a whole one.
		s.log.Error("bundle", "comparison", id, "err", err)
		return
	}
	if err := zw.Close(); err != nil {
		s.log.Warn("bundle: finish the zip", "comparison", id, "err", err)
	}
}

// BundleCollectionHandler is BundleHandler for collection id: its shared
// page (every model's pass@k on one chart and the figures table) and the
// static assets. Its comparisons are not in it: bundle each of them.
func BundleCollectionHandler(st *store.Store, cfg Config, log *slog.Logger, id int64) http.Handler {
	s := &Server{st: st, cfg: cfg, log: log, reports: analysis.NewCache(st, 0), fixed: &store.ShareLink{CollectionID: id}}
	mux := s.bundleRoutes()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, nil)))
	})
}

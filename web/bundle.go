package web

import (
	"log/slog"
	"net/http"

	"github.com/reach-lab/reach/internal/export"

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
	s := &Server{st: st, cfg: cfg, log: log, reports: analysis.NewCache(st, 0),
		fixed: &store.ShareLink{ComparisonID: id, ShowTexts: !o.CountsOnly, ShowNotes: true}, bundleSamples: o.MaxSamples}
	return s.bundleRoutes()
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

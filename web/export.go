package web

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/difficulty"
	"github.com/reach-lab/reach/internal/export"
	"github.com/reach-lab/reach/internal/store"
)

// exportSamples streams every sample of a comparison with its verdict, as
// JSON lines or parquet (/comparisons/{id}/samples.jsonl, .parquet; the same
// under /api/v1/).
func (s *Server) exportSamples(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.deny(w, r, http.StatusNotFound, "There is no such comparison.")
		return
	}
	c, err := s.st.GetComparison(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	format := chi.URLParam(r, "format")
	media, ok := export.Formats[format]
	if !ok {
		s.deny(w, r, http.StatusNotFound, "Samples export as samples.jsonl or samples.parquet.")
		return
	}
	if c.Status != store.StatusReady {
		http.Error(w, fmt.Sprintf("comparison %d is %s: export it once it is ready", c.ID, c.Status), http.StatusConflict)
		return
	}
	if !c.HasTexts() {
		// An empty file with 200 would read as "no samples were correct"; the CLI refuses the same way.
		http.Error(w, fmt.Sprintf("comparison %d was imported as per-problem counts: it has no samples to export (its counts are in /api/v1/comparisons/%d/report)", c.ID, c.ID), http.StatusConflict)
		return
	}
	w.Header().Set("Content-Type", media)
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="reach-comparison-%d-samples.%s"`, c.ID, format))
	if err := export.Comparison(r.Context(), w, s.st, c.ID, format); err != nil { // the status line is sent: all that is left is to log and cut the body short
		slog.Error("export samples", "comparison", c.ID, "format", format, "err", err)
	}
}

// exportDifficulty writes the comparison's per-problem difficulty
// (difficulty.Write: one record per problem and model) as CSV, JSON lines
// or parquet (/comparisons/{id}/difficulty.csv, .jsonl, .parquet; the same
// under /api/v1/), from the report of every problem.
func (s *Server) exportDifficulty(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.deny(w, r, http.StatusNotFound, "There is no such comparison.")
		return
	}
	format := chi.URLParam(r, "format")
	media, ok := difficulty.Formats[format]
	if !ok {
		s.deny(w, r, http.StatusNotFound, "Difficulty exports as difficulty.csv, difficulty.jsonl or difficulty.parquet.")
		return
	}
	c, err := s.st.GetComparison(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if c.Status != store.StatusReady {
		http.Error(w, fmt.Sprintf("comparison %d is %s: export it once it is ready", c.ID, c.Status), http.StatusConflict)
		return
	}
	e, err := s.reports.Get(r.Context(), id, analysis.Options{})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", media)
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="reach-comparison-%d-difficulty.%s"`, c.ID, format))
	if err := difficulty.Write(w, format, e.Report); err != nil {
		slog.Error("export difficulty", "comparison", c.ID, "format", format, "err", err)
	}
}

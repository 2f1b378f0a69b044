package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/apispec"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

type apiError struct {
	Error string `json:"error"`
}

func (s *Server) apiFail(w http.ResponseWriter, r *http.Request, err error) {
	var fe formError
	switch {
	case errors.As(err, &fe):
		writeJSON(w, http.StatusBadRequest, apiError{fe.msg})
	case errors.Is(err, store.ErrNotFound):
		writeJSON(w, http.StatusNotFound, apiError{err.Error()})
	case errors.Is(err, errForbidden):
		msg := "your role in that project does not allow this"
		if err != errForbidden { // wrapped with what was refused
			msg = err.Error()
		}
		writeJSON(w, http.StatusForbidden, apiError{msg})
	case errors.Is(err, analysis.ErrNotReady), errors.Is(err, analysis.ErrNoData):
		writeJSON(w, http.StatusConflict, apiError{err.Error()})
	case errors.Is(err, context.Canceled):
	default:
		writeJSON(w, http.StatusInternalServerError, apiError{s.internal(r, err)})
	}
}

// apiComparisonItem is one comparison in GET /api/v1/comparisons.
type apiComparisonItem struct {
	ID      int64    `json:"id"`
	Name    string   `json:"name"`
	Dataset string   `json:"dataset"`
	Status  string   `json:"status"`
	Models  []string `json:"models"`
	Project string   `json:"project"`
}

func (s *Server) apiComparisons(w http.ResponseWriter, r *http.Request) {
	u := currentUser(r)
	cs, err := s.st.ListComparisonsFor(r.Context(), u.ID, u.IsAdmin)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	out := make([]apiComparisonItem, len(cs))
	for i, c := range cs {
		out[i] = apiComparisonItem{c.ID, c.Name, c.DatasetName, c.Status, c.Models, c.ProjectName}
	}
	writeJSON(w, http.StatusOK, out)
}

// ComparisonStatus is the API's view of a comparison's state.
type ComparisonStatus struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	URL    string `json:"url"`
}

func (s *Server) apiComparison(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	c, err := s.st.GetComparison(r.Context(), id)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ComparisonStatus{ID: c.ID, Name: c.Name, Status: c.Status, Error: c.Error, URL: fmt.Sprintf("/comparisons/%d", c.ID)})
}

// apiCreateComparison takes the same multipart fields as the browser form
// (project_id or project picks the project; default: the default project).
func (s *Server) apiCreateComparison(w http.ResponseWriter, r *http.Request) {
	c, err := s.create(r.Context(), r)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, ComparisonStatus{ID: c.id, Name: c.name, Status: c.status, URL: fmt.Sprintf("/comparisons/%d", c.id)})
}

func (s *Server) apiReport(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	opt, err := s.reportOptionsFor(r, id) // ?exclude=guessable, ?estimator=biased, ?without=grading-errors
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	e, err := s.reports.Get(r.Context(), id, opt)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	eps, err := supportEps(r)
	if err != nil {
		s.deny(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if eps != 0 {
		// Support at the query's ε (?eps): a copy of the shared report with
		// that part replaced, encoded for this request only.
		rep := *e.Report
		if rep.Support, err = rep.SupportAt(eps); err != nil {
			s.apiFail(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if err := rep.WriteJSON(w); err != nil {
			slog.WarnContext(r.Context(), "report JSON not sent whole", "comparison", id, "err", err)
		}
		return
	}
	if e.Report.Problems > memoReportProblems {
		// Streamed, not kept: its size grows with the problems.
		w.Header().Set("Content-Type", "application/json")
		if err := streamGzip(w, r, e.Report.WriteJSON); err != nil {
			slog.WarnContext(r.Context(), "report JSON not sent whole", "comparison", id, "err", err)
		}
		return
	}
	b, err := memoBody(e, "report.json", func() ([]byte, error) {
		var buf bytes.Buffer
		err := e.Report.WriteJSON(&buf)
		return buf.Bytes(), err
	})
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	b.write(w, r)
}

// openAPIPath is where the API's OpenAPI document is served.
const openAPIPath = "/api/v1/openapi.json"

// openAPI serves the OpenAPI 3.1 document of /api/v1/ (web/apispec).
func openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", apispec.MediaType)
	_, _ = w.Write(apispec.JSON())
}

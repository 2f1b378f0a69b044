package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// A comparison whose samples files are in no layout Reach recognises waits at
// needs-mapping until each such file's field mapping is confirmed: on the
// mapping page, or with POST /api/v1/comparisons/{id}/mapping.

// mappingRuns describes the runs awaiting a mapping: the guess, the file's
// fields at any depth and its first record.
func (s *Server) mappingRuns(ctx context.Context, c store.Comparison) ([]views.MappingRun, error) {
	var out []views.MappingRun
	for _, run := range c.Runs {
		if run.Format != "" || run.UploadID == nil {
			continue
		}
		mr := views.MappingRun{Run: run}
		if len(run.Mapping) > 0 {
			_ = json.Unmarshal(run.Mapping, &mr.Mapping)
		}
		ex, err := ingest.Examine(s.st.OpenUpload(ctx, *run.UploadID), run.SourceFile)
		var ie *ingest.Error
		if err != nil && !errors.As(err, &ie) {
			return nil, err
		}
		mr.Fields, mr.Items, mr.Preview = ex.Fields, ex.ItemFields, ex.Preview
		out = append(out, mr)
	}
	return out, nil
}

func (s *Server) mapping(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	if c.Status != store.StatusNeedsMapping {
		http.Redirect(w, r, fmt.Sprintf("/comparisons/%d", c.ID), http.StatusSeeOther)
		return
	}
	runs, err := s.mappingRuns(r.Context(), c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.MappingPage(c, runs, ""))
}

// mappingFromForm reads one run's mapping from the mapping form's fields
// run<ID>_<key>.
func mappingFromForm(r *http.Request, runID int64) (ingest.Mapping, error) {
	get := func(f string) string {
		return strings.TrimSpace(r.PostForm.Get(fmt.Sprintf("run%d_%s", runID, f)))
	}
	m := ingest.Mapping{ProblemID: get("problem_id"), IDKind: get("id_kind"), List: get("list"), Completion: get("completion"),
		Correct: get("correct"), Extracted: get("extracted"), SampleIndex: get("sample_index"), FinishReason: get("finish_reason"),
		Tokens: get("tokens"), Question: get("question"), Prompt: get("prompt"), Reference: get("reference")}
	if t := get("threshold"); t != "" {
		v, err := strconv.ParseFloat(t, 64)
		if err != nil || v <= 0 {
			return m, badForm("the verdict threshold %q is not a positive number", t)
		}
		m.Threshold = v
	}
	return m, nil
}

func (s *Server) confirmMapping(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	if c.Status != store.StatusNeedsMapping {
		http.Redirect(w, r, fmt.Sprintf("/comparisons/%d", c.ID), http.StatusSeeOther)
		return
	}
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, err)
		return
	}
	ms := map[int64]ingest.Mapping{}
	var err error
	for _, run := range c.Runs {
		if run.Format == "" {
			if ms[run.ID], err = mappingFromForm(r, run.ID); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = s.applyMappings(r.Context(), c, ms)
	}
	var fe formError
	if errors.As(err, &fe) {
		runs, rerr := s.mappingRuns(r.Context(), c)
		if rerr != nil {
			s.fail(w, r, rerr)
			return
		}
		s.render(w, r, http.StatusBadRequest, views.MappingPage(c, runs, fe.msg))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/comparisons/%d", c.ID), http.StatusSeeOther)
}

// applyMappings checks each awaiting run's mapping against the first records
// of its file, stores them and starts the import, in one transaction. Every
// awaiting run needs one; a bad one is a form error naming the model.
func (s *Server) applyMappings(ctx context.Context, c store.Comparison, ms map[int64]ingest.Mapping) error {
	for _, run := range c.Runs {
		if run.Format != "" || run.UploadID == nil {
			continue
		}
		m, ok := ms[run.ID]
		if !ok {
			return badForm("%s: no field mapping given", run.ModelName)
		}
		if m.Completion == "" && m.Correct == "" {
			return badForm("%s: choose at least the completion text or the verdict field", run.ModelName)
		}
		if err := mappingTooLong(m); err != nil {
			return badForm("%s: %v", run.ModelName, err)
		}
		head, err := s.st.UploadHead(ctx, *run.UploadID, ingest.SniffBytes)
		if err != nil {
			return err
		}
		if err := ingest.CheckMapping(head, run.SourceFile, &m); err != nil {
			return badForm("%s: %s", run.ModelName, strings.TrimPrefix(err.Error(), "ingest: "))
		}
	}
	return s.st.WithTx(ctx, func(tx *store.Store) error {
		for _, run := range c.Runs {
			if run.Format != "" || run.UploadID == nil {
				continue
			}
			if err := tx.SetRunMapping(ctx, run.ID, string(ingest.FormatMapped), ms[run.ID]); err != nil {
				return err
			}
		}
		if err := tx.SetComparisonStatus(ctx, c.ID, store.StatusPending, ""); err != nil {
			return err
		}
		return jobs.StartImport(ctx, s.jobs, tx, c.ID)
	})
}

// APIMapping is a field mapping in the API: the --map keys (see
// intake.ParseMapping) as JSON fields.
type APIMapping struct {
	ProblemID    string  `json:"problem_id,omitempty"`
	IDKind       string  `json:"id_kind,omitempty"`
	List         string  `json:"list,omitempty"`
	Completion   string  `json:"completion,omitempty"`
	Correct      string  `json:"correct,omitempty"`
	Threshold    float64 `json:"threshold,omitempty"`
	Extracted    string  `json:"extracted,omitempty"`
	SampleIndex  string  `json:"sample_index,omitempty"`
	FinishReason string  `json:"finish_reason,omitempty"`
	Tokens       string  `json:"tokens,omitempty"`
	Question     string  `json:"question,omitempty"`
	Prompt       string  `json:"prompt,omitempty"`
	Reference    string  `json:"reference,omitempty"`
}

func apiMapping(m ingest.Mapping) APIMapping {
	return APIMapping{m.ProblemID, m.IDKind, m.List, m.Completion, m.Correct, m.Threshold, m.Extracted, m.SampleIndex,
		m.FinishReason, m.Tokens, m.Question, m.Prompt, m.Reference}
}

func (a APIMapping) mapping() ingest.Mapping {
	return ingest.Mapping{ProblemID: a.ProblemID, IDKind: a.IDKind, List: a.List, Completion: a.Completion, Correct: a.Correct,
		Threshold: a.Threshold, Extracted: a.Extracted, SampleIndex: a.SampleIndex, FinishReason: a.FinishReason, Tokens: a.Tokens,
		Question: a.Question, Prompt: a.Prompt, Reference: a.Reference}
}

// MappingStatus is GET /api/v1/comparisons/{id}/mapping: the files awaiting
// a mapping, each with Reach's guess and the file's fields.
type MappingStatus struct {
	ID     int64            `json:"id"`
	Status string           `json:"status"`
	Runs   []MappingRunJSON `json:"runs"`
}

// MappingRunJSON is one file awaiting a mapping.
type MappingRunJSON struct {
	RunID      int64      `json:"run_id"`
	Model      string     `json:"model"`
	File       string     `json:"file"`
	Guess      APIMapping `json:"guess"`
	Fields     []string   `json:"fields"`
	ItemFields []string   `json:"item_fields"`
	Preview    string     `json:"preview"`
}

func (s *Server) apiGetMapping(w http.ResponseWriter, r *http.Request) {
	c, err := s.apiComparisonParam(r)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	out := MappingStatus{ID: c.ID, Status: c.Status, Runs: []MappingRunJSON{}}
	if c.Status == store.StatusNeedsMapping {
		runs, err := s.mappingRuns(r.Context(), c)
		if err != nil {
			s.apiFail(w, r, err)
			return
		}
		for _, mr := range runs {
			out.Runs = append(out.Runs, MappingRunJSON{RunID: mr.Run.ID, Model: mr.Run.ModelName, File: mr.Run.SourceFile,
				Guess: apiMapping(mr.Mapping), Fields: nonNil(mr.Fields), ItemFields: nonNil(mr.Items), Preview: mr.Preview})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// MappingRequest is the body of POST /api/v1/comparisons/{id}/mapping:
// mappings by model name, and AcceptGuess to take Reach's guess for every
// file not named.
type MappingRequest struct {
	Mappings    map[string]APIMapping `json:"mappings"`
	AcceptGuess bool                  `json:"accept_guess"`
}

func (s *Server) apiConfirmMapping(w http.ResponseWriter, r *http.Request) {
	c, err := s.apiComparisonParam(r)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	if c.Status != store.StatusNeedsMapping {
		writeJSON(w, http.StatusConflict, apiError{fmt.Sprintf("comparison %d is %s, not waiting for a field mapping", c.ID, c.Status)})
		return
	}
	var req MappingRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		s.apiFail(w, r, badForm("the body must be JSON {\"mappings\": {\"MODEL\": {\"completion\": \"…\", …}}, \"accept_guess\": false}: %v", err))
		return
	}
	ms := map[int64]ingest.Mapping{}
	names := map[string]bool{}
	for _, run := range c.Runs {
		names[run.ModelName] = true
		if run.Format != "" || run.UploadID == nil {
			continue
		}
		switch a, ok := req.Mappings[run.ModelName]; {
		case ok:
			ms[run.ID] = a.mapping()
		case req.AcceptGuess && len(run.Mapping) > 0:
			var m ingest.Mapping
			if err := json.Unmarshal(run.Mapping, &m); err != nil {
				s.apiFail(w, r, err)
				return
			}
			ms[run.ID] = m
		}
	}
	for name := range req.Mappings {
		if !names[name] {
			s.apiFail(w, r, badForm("no model %q in comparison %d", name, c.ID))
			return
		}
	}
	if err := s.applyMappings(r.Context(), c, ms); err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, ComparisonStatus{ID: c.ID, Name: c.Name, Status: store.StatusPending, URL: fmt.Sprintf("/comparisons/%d", c.ID)})
}

// apiComparisonParam loads the comparison of the route's {id}.
func (s *Server) apiComparisonParam(r *http.Request) (store.Comparison, error) {
	id, err := idParam(r, "id")
	if err != nil {
		return store.Comparison{}, err
	}
	return s.st.GetComparison(r.Context(), id)
}

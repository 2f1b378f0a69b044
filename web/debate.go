package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/sampling"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// The comparison page's Debate section (issue 15): the judge endpoint
// (CoT-pass@k) and the scoring endpoint (perplexity under the base model),
// set up, tested, started and paused like sampling endpoints. The jobs are
// internal/jobs' JudgeWorker and ScoreWorker; the network policy applies
// to these endpoints as to every other (the client's dialer checks it).

// maxJudgeTemplate caps a custom judge or scoring prompt template.
const maxJudgeTemplate = 64 << 10

// failFor answers an error as JSON under /api/, as a page elsewhere.
func (s *Server) failFor(w http.ResponseWriter, r *http.Request, err error) {
	if isAPI(r) {
		s.apiFail(w, r, err)
		return
	}
	s.fail(w, r, err)
}

// apiDebateEndpoint is one endpoint in GET /api/v1/comparisons/{id}/debate
// (never its API key).
type apiDebateEndpoint struct {
	Purpose        string           `json:"purpose"`
	State          string           `json:"state"` // not set up | idle | running | finished | paused | failed
	Error          string           `json:"error,omitempty"`
	BaseURL        string           `json:"base_url,omitempty"`
	Model          string           `json:"model,omitempty"`
	Style          string           `json:"style,omitempty"`
	HasAPIKey      bool             `json:"has_api_key"`
	MaxConcurrency int              `json:"max_concurrency,omitempty"`
	MaxTokens      int              `json:"max_tokens,omitempty"`
	MaxPerProblem  int              `json:"max_per_problem"`
	Template       string           `json:"template,omitempty"`
	TemplateText   string           `json:"template_text,omitempty"`
	Method         string           `json:"method,omitempty"`
	MethodNote     string           `json:"method_note,omitempty"`
	SamplesDone    int64            `json:"samples_done"`
	SamplesTotal   int64            `json:"samples_total"`
	TokensIn       int64            `json:"tokens_in"`
	TokensOut      int64            `json:"tokens_out"`
	Requests       int64            `json:"requests"`
	Errors         map[string]int64 `json:"failed_attempts,omitempty"`
	Scope          string           `json:"scope,omitempty"` // tokens: split or all
}

func apiDebate(e views.DebateEndpointView) apiDebateEndpoint {
	x := e.E
	if e.Purpose != store.PurposeTokens || !e.Configured {
		x.Scope = ""
	}
	return apiDebateEndpoint{Purpose: e.Purpose, State: e.State(), Error: x.Error, BaseURL: x.Endpoint.BaseURL, Model: x.Endpoint.Model,
		Style: x.Endpoint.Style, HasAPIKey: e.HasKey, MaxConcurrency: x.Endpoint.MaxConcurrency, MaxTokens: x.MaxTokens,
		MaxPerProblem: x.MaxPerProblem, Template: x.Template, TemplateText: x.TemplateText, Method: x.Method, MethodNote: x.MethodNote,
		SamplesDone: e.Done, SamplesTotal: e.Total, TokensIn: x.Usage.TokensIn, TokensOut: x.Usage.TokensOut, Requests: x.Usage.Requests,
		Errors: x.Usage.Errors, Scope: x.Scope}
}

// writeDebate answers the API with both endpoints' state.
func (s *Server) writeDebate(w http.ResponseWriter, r *http.Request, c store.Comparison, status int) {
	v, err := s.debateView(r.Context(), c, false)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, status, map[string]apiDebateEndpoint{store.PurposeJudge: apiDebate(v.Judge), store.PurposeScore: apiDebate(v.Score),
		store.PurposeTokens: apiDebate(v.Tokens)})
}

// purposeParam reads {purpose}: judge, score or tokens, else ErrNotFound.
func purposeParam(r *http.Request) (string, error) {
	p := chiParam(r, "purpose")
	if p != store.PurposeJudge && p != store.PurposeScore && p != store.PurposeTokens {
		return "", fmt.Errorf("%q is neither judge, score nor tokens: %w", p, store.ErrNotFound)
	}
	return p, nil
}

// debateView reads the Debate section: each endpoint's settings (never its
// key), state, progress over the runs and cost so far.
func (s *Server) debateView(ctx context.Context, c store.Comparison, canEdit bool) (views.DebateView, error) {
	var d debateReads
	if err := s.st.Batch(ctx, d.queue(s.st, c.ID)...); err != nil {
		return views.DebateView{}, err
	}
	return s.debateViewOf(ctx, c, canEdit, d)
}

// debatePurposes are the Debate section's endpoints, in debateReads' order.
var debatePurposes = [3]string{store.PurposeJudge, store.PurposeScore, store.PurposeTokens}

// debateReads are what the Debate section reads: each endpoint (found or
// not) and the comparison's progress rows, queued for one round trip.
type debateReads struct {
	endpoints [3]store.DebateEndpoint
	found     [3]bool
	progress  []store.Progress
}

func (d *debateReads) queue(st *store.Store, comparisonID int64) []store.Queued {
	qs := make([]store.Queued, 0, 4)
	for i, purpose := range debatePurposes {
		qs = append(qs, st.DebateEndpointInto(comparisonID, purpose, &d.endpoints[i], &d.found[i]))
	}
	return append(qs, st.ProgressInto(comparisonID, &d.progress))
}

// debateViewOf is debateView of what d read.
func (s *Server) debateViewOf(ctx context.Context, c store.Comparison, canEdit bool, d debateReads) (views.DebateView, error) {
	v := views.DebateView{C: c, CanEdit: canEdit, Presets: sampling.PresetNames(), DefaultJudge: sampling.DefaultJudgeTemplate,
		Ready: c.Status == store.StatusReady}
	var evs []views.DebateEndpointView
	running := false
	for i, purpose := range debatePurposes {
		ev := views.DebateEndpointView{Purpose: purpose}
		if d.found[i] {
			e := d.endpoints[i]
			ev.Configured, ev.E = true, e
			ev.E.Endpoint.APIKeyEnc = nil
			ev.HasKey = len(e.Endpoint.APIKeyEnc) > 0
			if e.Status == store.DebateRunning {
				var err error
				if ev.Active, err = jobs.ActiveDebateJobs(ctx, s.st, c.ID, purpose); err != nil {
					return v, err
				}
				running = true
			}
		}
		evs = append(evs, ev)
	}
	ps := d.progress
	if running {
		// Active jobs are counted before progress is read: a job that ends
		// in between has saved its progress, so "finished" never shows with
		// the last samples uncounted (a race seen under load: "9 of 10
		// samples"). Read again, after the count.
		var err error
		if ps, err = s.st.ProgressForComparison(ctx, c.ID); err != nil {
			return v, err
		}
	}
	for _, ev := range evs {
		purpose := ev.Purpose
		if ev.Configured {
			stage := map[string]string{store.PurposeJudge: jobs.StageJudge, store.PurposeScore: jobs.StageScore,
				store.PurposeTokens: jobs.StageTokens}[purpose]
			for _, p := range ps {
				if p.Stage == stage {
					ev.Done, ev.Total = ev.Done+p.Done, ev.Total+p.Total
				}
			}
		}
		switch purpose {
		case store.PurposeJudge:
			v.Judge = ev
		case store.PurposeScore:
			v.Score = ev
		default:
			v.Tokens = ev
		}
	}
	return v, nil
}

// debateFragment serves the Debate section alone (the page polls it while
// judging or scoring runs).
func (s *Server) debateFragment(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	if isAPI(r) {
		s.writeDebate(w, r, c, http.StatusOK)
		return
	}
	v, err := s.debateView(r.Context(), c, perms(routeRole(r)).Edit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.DebateSection(v))
}

// parseDebateEndpoint reads the judge or scoring endpoint form.
func (s *Server) parseDebateEndpoint(r *http.Request, id int64, purpose string) (store.DebateEndpoint, bool, error) {
	get := func(k string) string { return strings.TrimSpace(r.PostForm.Get(k)) }
	e := store.DebateEndpoint{ComparisonID: id, Purpose: purpose}
	e.Endpoint = store.Endpoint{BaseURL: get("base_url"), Model: get("model"), Style: get("style")}
	key := get("api_key")
	what := "Judge"
	switch purpose {
	case store.PurposeScore:
		what = "Scoring model"
		e.Endpoint.Style = string(sampling.StyleCompletions) // log-probabilities of a prompt: completions only
	case store.PurposeTokens:
		what = "RL scoring model"
		e.Endpoint.Style = string(sampling.StyleCompletions)
		e.Scope = get("scope")
		if e.Scope == "" {
			e.Scope = store.TokenScopeSplit
		}
		if e.Scope != store.TokenScopeSplit && e.Scope != store.TokenScopeAll {
			return e, false, badForm("RL scoring model: scope %q is neither split nor all", e.Scope)
		}
	}
	if e.Endpoint.Style == "" {
		e.Endpoint.Style = string(sampling.StyleChat)
	}
	e.Template, e.TemplateText = get("template"), r.PostForm.Get("template_text")
	if err := firstTooLong(lenCheck{what + "'s base URL", e.Endpoint.BaseURL, maxURL}, lenCheck{what + "'s served model", e.Endpoint.Model, maxModelID},
		lenCheck{what + "'s API key", key, maxAPIKey}, lenCheck{what + "'s style", e.Endpoint.Style, maxName},
		lenCheck{what + "'s template", e.Template, maxName}, lenCheck{what + "'s prompt template", e.TemplateText, maxJudgeTemplate}); err != nil {
		return e, false, err
	}
	if e.Endpoint.BaseURL == "" || e.Endpoint.Model == "" {
		return e, false, badForm("%s: give a base URL and the served model", what)
	}
	if _, err := sampling.New(sampling.Endpoint{BaseURL: e.Endpoint.BaseURL, Model: e.Endpoint.Model, Style: sampling.Style(e.Endpoint.Style)}, nil); err != nil {
		return e, false, badForm("%s: %v", what, err)
	}
	num := func(k string, def, lo, hi int) (int, error) {
		v := get(k)
		if v == "" {
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return 0, badForm("%s: %s %q is not a whole number from %d to %d", what, k, v, lo, hi)
		}
		return n, nil
	}
	var err error
	if e.Endpoint.MaxConcurrency, err = num("max_concurrency", 8, 1, 256); err != nil {
		return e, false, err
	}
	if e.MaxTokens, err = num("max_tokens", 512, 16, 32768); err != nil {
		return e, false, err
	}
	if e.MaxPerProblem, err = num("max_per_problem", 0, 0, 1<<20); err != nil {
		return e, false, err
	}
	if purpose == store.PurposeTokens {
		e.Template, e.TemplateText = "", "" // scored after the base scoring endpoint's prompt
	} else if purpose == store.PurposeJudge {
		if e.Template != "custom" {
			e.Template, e.TemplateText = "default", ""
		} else if err := sampling.ParseJudgeTemplate(sampling.Template{Name: "custom", Text: e.TemplateText}); err != nil {
			return e, false, badForm("Judge prompt template: %v", err)
		}
	} else {
		if e.Template != "custom" {
			e.TemplateText = ""
		}
		t, err := jobs.ScoreTemplate(e)
		if err == nil {
			_, err = sampling.Render(t, sampling.PromptData{Problem: "problem", Subject: "subject", Level: "level"})
		}
		if err != nil {
			return e, false, badForm("Scoring prompt template: %v", err)
		}
	}
	if key != "" {
		if s.cfg.Secret == nil {
			return e, false, badForm("%s: this server has no secret (REACH_SECRET) to store an API key with", what)
		}
		if e.Endpoint.APIKeyEnc, err = s.cfg.Secret.SealFor(key, e.Endpoint.BaseURL); err != nil {
			return e, false, err
		}
	}
	return e, key == "" && get("clear_key") != "on", nil
}

// debateSave stores the judge or scoring endpoint's settings.
func (s *Server) debateSave(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	purpose, err := purposeParam(r)
	if err != nil {
		s.failFor(w, r, err)
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	e, keep, err := s.parseDebateEndpoint(r, c.ID, purpose)
	var fe formError
	if errors.As(err, &fe) && !isAPI(r) {
		s.render(w, r, http.StatusBadRequest, views.ErrorPage(400, "Cannot save the "+purpose+" endpoint", fe.msg))
		return
	}
	if err == nil && keep {
		// A stored key is bound to the endpoint it was given for: another
		// scheme, host, port or path drops it unless a key is typed again
		// (else an editor could send the owner's key to a URL of theirs).
		var old store.DebateEndpoint
		old, err = s.st.GetDebateEndpoint(r.Context(), c.ID, purpose)
		switch {
		case errors.Is(err, store.ErrNotFound):
			keep, err = false, nil
		case err == nil && !secret.SameEndpoint(old.Endpoint.BaseURL, e.Endpoint.BaseURL):
			keep = false
		}
	}
	if err == nil {
		err = s.st.PutDebateEndpoint(r.Context(), e, keep)
	}
	if err == nil && purpose == store.PurposeTokens {
		err = s.st.SetTokenScope(r.Context(), c.ID, e.Scope)
	}
	if err != nil {
		s.failFor(w, r, err)
		return
	}
	if isAPI(r) {
		s.writeDebate(w, r, c, http.StatusOK)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/comparisons/%d#debate", c.ID), http.StatusSeeOther)
}

// debateTest sends one real request to the judge (the first answer-correct
// sample's judge prompt) or the scoring endpoint (which also detects how it
// gives log-probabilities) and shows the answer or the exact error.
func (s *Server) debateTest(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	purpose, err := purposeParam(r)
	if err != nil {
		s.failFor(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 90*time.Second)
	defer cancel()
	var reply string
	if purpose == store.PurposeTokens {
		reply, err = jobs.TestTokenEndpoints(ctx, s.st, s.cfg.Secret, c.ID)
	} else {
		reply, err = jobs.TestDebateEndpoint(ctx, s.st, s.cfg.Secret, c.ID, purpose)
	}
	if isAPI(r) {
		// {"ok", "message"}: the judge's or the server's answer, or the error.
		switch {
		case errors.Is(err, store.ErrNotFound):
			writeJSON(w, http.StatusOK, apiTestResult{false, "set up the " + purpose + " endpoint (or, for the judge, have an answer-correct sample) first"})
		case err != nil && fromDatabase(err):
			s.apiFail(w, r, err)
		case err != nil:
			writeJSON(w, http.StatusOK, apiTestResult{false, err.Error()})
		default:
			writeJSON(w, http.StatusOK, apiTestResult{true, reply})
		}
		return
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.render(w, r, http.StatusOK, views.TestResult("", "Set up the "+purpose+" endpoint (or, for the judge, have an answer-correct sample) first."))
	case err != nil && fromDatabase(err):
		s.fail(w, r, err)
	case err != nil:
		s.render(w, r, http.StatusOK, views.TestResult("", err.Error()))
	default:
		s.render(w, r, http.StatusOK, views.TestResult(reply, ""))
	}
}

// apiTestResult answers POST /api/v1/comparisons/{id}/debate/{purpose}/test.
type apiTestResult struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// debateAction starts (or resumes) or pauses judging or scoring.
func (s *Server) debateAction(action string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.comparisonParam(w, r)
		if !ok {
			return
		}
		purpose, err := purposeParam(r)
		if err != nil {
			s.failFor(w, r, err)
			return
		}
		ctx := r.Context()
		title := "Cannot " + action + " " + map[string]string{store.PurposeJudge: "judging", store.PurposeScore: "scoring",
			store.PurposeTokens: "token scoring"}[purpose]
		conflict := func(msg string) {
			if isAPI(r) {
				writeJSON(w, http.StatusConflict, apiError{msg})
				return
			}
			s.render(w, r, http.StatusConflict, views.ErrorPage(409, title, msg))
		}
		if _, err := s.st.GetDebateEndpoint(ctx, c.ID, purpose); errors.Is(err, store.ErrNotFound) {
			conflict("Set up the " + purpose + " endpoint first.")
			return
		} else if err != nil {
			s.failFor(w, r, err)
			return
		}
		switch {
		case action == "start" && purpose == store.PurposeTokens:
			_, err = jobs.StartTokens(ctx, s.jobs, s.st, c.ID, 0)
		case action == "start":
			_, err = jobs.StartDebate(ctx, s.jobs, s.st, c.ID, purpose)
		default:
			err = jobs.PauseDebate(ctx, s.jobs, s.st, c.ID, purpose)
		}
		if errors.Is(err, jobs.ErrWrongState) {
			conflict(err.Error())
			return
		}
		if err != nil {
			s.failFor(w, r, err)
			return
		}
		if isAPI(r) {
			s.writeDebate(w, r, c, http.StatusAccepted)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/comparisons/%d#debate", c.ID), http.StatusSeeOther)
	}
}

package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// gradingView is what the report page shows about how a comparison was
// graded, and which of re-verify and restore apply.
func (s *Server) gradingView(ctx context.Context, c store.Comparison) (views.GradingView, error) {
	g := views.GradingView{ComparisonID: c.ID, Policy: c.GradingPolicy}
	plan, err := jobs.PlanReverify(ctx, s.st, s.cfg.Verifier, c)
	if err != nil {
		return g, err
	}
	g.ReverifyWhy = plan.Why
	replaced, err := s.st.FileVerdictsReplaced(ctx, c.ID)
	if err != nil {
		return g, err
	}
	for _, n := range replaced {
		g.Replaced += n
	}
	if g.Scope, err = s.st.PolicyScopeOf(ctx, c.ID); err != nil {
		return g, err
	}
	qs, err := s.st.RunQualities(ctx, c.ID)
	if err != nil {
		return g, err
	}
	for _, r := range c.Runs {
		if r.HasTexts {
			g.HasTexts = true
		}
		if q, ok := qs[r.ID]; ok && q.Truncated == nil && q.GradingPolicy != "file" {
			g.NoFinishReason = append(g.NoFinishReason, r.ModelName)
		}
	}
	return g, nil
}

func userID(r *http.Request) int64 {
	if u := currentUser(r); u != nil {
		return u.ID
	}
	return 0
}

// reverifyConfirm asks before re-verifying: which models, how many samples,
// which verifier, and that the files' verdicts can be restored.
func (s *Server) reverifyConfirm(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	plan, err := jobs.PlanReverify(r.Context(), s.st, s.cfg.Verifier, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.ReverifyConfirm(c, plan.Runs, plan.Samples, plan.Verifier, plan.Why))
}

// gradingAction runs one of reverify, restore-verdicts, policy, retry and
// cancel-import on a comparison, then goes back to its page.
func (s *Server) gradingAction(action string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.comparisonParam(w, r)
		if !ok {
			return
		}
		ctx, uid := r.Context(), userID(r)
		var err error
		switch action {
		case "reverify":
			err = jobs.StartReverify(ctx, s.jobs, s.st, s.cfg.Verifier, c.ID, uid)
		case "restore-verdicts":
			_, err = jobs.RestoreFileVerdicts(ctx, s.jobs, s.st, c.ID, uid)
		case "policy":
			policy := strings.TrimSpace(r.FormValue("policy"))
			if policy != store.PolicyStrict && policy != store.PolicyLenient {
				s.conflict(w, r, "Unknown grading policy", fmt.Sprintf("Grading policy %q: choose strict or lenient.", policy))
				return
			}
			err = jobs.SetGradingPolicy(ctx, s.jobs, s.st, c.ID, uid, policy)
		case "retry":
			err = jobs.RetryImport(ctx, s.jobs, s.st, c.ID, uid)
		case "cancel-import":
			who := ""
			if u := currentUser(r); u != nil {
				who = u.Email
			}
			err = jobs.CancelImport(ctx, s.jobs, s.st, c.ID, uid, who)
		}
		if errors.Is(err, jobs.ErrCannotReverify) || errors.Is(err, jobs.ErrWrongState) {
			s.conflict(w, r, "Cannot "+strings.ReplaceAll(action, "-", " "), err.Error())
			return
		}
		if err != nil && isAPI(r) {
			s.apiFail(w, r, err)
			return
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if isAPI(r) {
			writeJSON(w, http.StatusAccepted, ComparisonStatus{ID: c.ID, Name: c.Name, Status: "accepted: " + action,
				URL: fmt.Sprintf("/comparisons/%d", c.ID)})
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/comparisons/%d", c.ID), http.StatusSeeOther)
	}
}

func (s *Server) conflict(w http.ResponseWriter, r *http.Request, title, msg string) {
	if isAPI(r) {
		writeJSON(w, http.StatusConflict, apiError{msg})
		return
	}
	s.render(w, r, http.StatusConflict, views.ErrorPage(http.StatusConflict, title, msg))
}

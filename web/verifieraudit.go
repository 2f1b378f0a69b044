package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// The verifier audit page (issue 25, item 2): the comparison's judge asked
// whether the final answer of each sample that decides the figures (and of
// m random others) equals the reference; the disagreements, reviewed with
// one click. The pure parts are internal/audit, the scope and figures
// internal/analysis, the job internal/jobs.AuditWorker.

// defaultAuditM is the random stratum's size the form offers first.
const defaultAuditM = 200

// auditM reads m (the random stratum's size) from a query or form value:
// a whole number 0..jobs.MaxAuditRandom.
func auditM(v string, def int) (int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return def, nil
	}
	m, err := strconv.Atoi(v)
	if err != nil || m < 0 || m > jobs.MaxAuditRandom {
		return 0, fmt.Errorf("the random sample must be a whole number from 0 to %d", jobs.MaxAuditRandom)
	}
	return m, nil
}

func (s *Server) verifierAuditView(ctx context.Context, r *http.Request, c store.Comparison) (views.VerifierAuditView, error) {
	v := views.VerifierAuditView{C: c, CanEdit: perms(routeRole(r)).Edit, Ready: c.Status == store.StatusReady, HasTexts: c.HasTexts(), M: defaultAuditM, Seed: 1}
	if e, err := s.st.GetDebateEndpoint(ctx, c.ID, store.PurposeJudge); err == nil {
		v.Judge = &e
	} else if !errors.Is(err, store.ErrNotFound) {
		return v, err
	}
	if a, err := s.st.GetVerifierAudit(ctx, c.ID); err == nil {
		v.Audit = &a
		v.M, v.Seed = a.M, a.Seed
		if v.Active, err = jobs.ActiveAuditJobs(ctx, s.st, c.ID); err != nil {
			return v, err
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return v, err
	}
	m, err := auditM(r.URL.Query().Get("m"), v.M)
	if err != nil {
		v.Error = err.Error()
	} else {
		v.M = m
	}
	if sd := r.URL.Query().Get("seed"); sd != "" {
		if x, err := strconv.ParseUint(sd, 10, 64); err == nil {
			v.Seed = x
		}
	}
	if !v.Ready || !v.HasTexts {
		return v, nil
	}
	sc, err := analysis.LoadAuditScope(ctx, s.st, c.ID)
	if errors.Is(err, analysis.ErrNoData) || errors.Is(err, analysis.ErrNotReady) {
		v.Error = err.Error()
		return v, nil
	}
	if err != nil {
		return v, err
	}
	// The plan counts every sample of the comparison: not on each poll of
	// a running audit (no new audit can start then anyway).
	if v.Audit == nil || v.Audit.Status != store.DebateRunning || v.Active == 0 {
		plan, err := analysis.PlanAudit(ctx, s.st, sc, v.M)
		if err != nil {
			return v, err
		}
		v.Plan = &plan
	}
	if v.Audit != nil {
		items, err := s.st.AuditItems(ctx, c.ID)
		if err != nil {
			return v, err
		}
		sum, err := analysis.SummariseAudit(sc, items)
		if err != nil {
			return v, err
		}
		v.Summary = &sum
	}
	return v, nil
}

// verifierAuditPage shows the audit: the form (m, seed, the request count
// it costs), progress, per-model rates, the flip and the disagreements.
func (s *Server) verifierAuditPage(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	v, err := s.verifierAuditView(r.Context(), r, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.VerifierAuditPage(v))
}

// verifierAuditAction starts (POST m, seed, fresh=1 for a new audit, else
// the existing one resumed) or pauses the audit.
func (s *Server) verifierAuditAction(action string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.comparisonParam(w, r)
		if !ok {
			return
		}
		if !s.parseForm(w, r) {
			return
		}
		ctx := r.Context()
		conflict := func(msg string) {
			s.render(w, r, http.StatusConflict, views.ErrorPage(409, "Cannot "+action+" the verifier audit", msg))
		}
		var err error
		if action == "start" {
			m, merr := auditM(r.PostForm.Get("m"), defaultAuditM)
			if merr != nil {
				s.deny(w, r, http.StatusBadRequest, merr.Error())
				return
			}
			seed, serr := strconv.ParseUint(strings.TrimSpace(r.PostForm.Get("seed")), 10, 64)
			if serr != nil {
				seed = 1
			}
			if !c.HasTexts() {
				conflict("This comparison has no completion texts: the judge needs them.")
				return
			}
			_, err = jobs.StartAudit(ctx, s.jobs, s.st, c.ID, m, seed, currentUser(r).ID, r.PostForm.Get("fresh") != "")
		} else {
			if _, gerr := s.st.GetVerifierAudit(ctx, c.ID); errors.Is(gerr, store.ErrNotFound) {
				conflict("No verifier audit was started.")
				return
			}
			err = jobs.PauseAudit(ctx, s.jobs, s.st, c.ID)
		}
		if errors.Is(err, jobs.ErrWrongState) {
			conflict(err.Error())
			return
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/comparisons/%d/verifier-audit", c.ID), http.StatusSeeOther)
	}
}

// resolveAuditItem records a reviewer's choice on one disagreement: POST
// resolution = reach (keep Reach's verdict) or judge (accept the judge's,
// as a verdict override). Both are in the audit log.
func (s *Server) resolveAuditItem(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	p, rid, idx, err := s.sampleOf(r, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	res := r.PostForm.Get("resolution")
	if res != store.ResolveReach && res != store.ResolveJudge {
		s.deny(w, r, http.StatusBadRequest, "Choose reach or judge.")
		return
	}
	if c.Status != store.StatusReady {
		s.render(w, r, http.StatusConflict, views.ErrorPage(409, "Not ready", "This comparison is "+c.Status+"; review the audit once it is ready."))
		return
	}
	err = s.st.ResolveAuditItem(r.Context(), c.ID, rid, p.ID, idx, res, currentUser(r).ID)
	if errors.Is(err, store.ErrNotFound) {
		s.render(w, r, http.StatusConflict, views.ErrorPage(409, "Not a disagreement",
			"The judge has not contradicted Reach's verdict on this sample, so there is nothing to choose."))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if s.jobs != nil {
		if err := jobs.StartStats(r.Context(), s.jobs, c.ID); err != nil {
			s.log.Warn("enqueue statistics", "comparison", c.ID, "err", err)
		}
	}
	http.Redirect(w, r, fmt.Sprintf("/comparisons/%d/verifier-audit#item-%d-%d-%d", c.ID, rid, p.ID, idx), http.StatusSeeOther)
}

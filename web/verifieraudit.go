package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/audit"
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

// auditSeed reads the seed: a whole number from 1 to 2^64 − 1 (empty: 1).
// A mistyped seed is refused rather than replaced: the same m and seed
// must give the same samples.
func auditSeed(v string) (uint64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 1, nil
	}
	x, err := strconv.ParseUint(v, 10, 64)
	if err != nil || x == 0 {
		return 0, errors.New("the seed must be a whole number from 1 to 18446744073709551615")
	}
	return x, nil
}

func (s *Server) verifierAuditView(ctx context.Context, r *http.Request, c store.Comparison) (views.VerifierAuditView, error) {
	v := views.VerifierAuditView{C: c, CanEdit: perms(routeRole(r)).Edit, Ready: c.Status == store.StatusReady, HasTexts: c.HasTexts(), M: defaultAuditM, Seed: 1}
	if e, err := s.st.GetDebateEndpoint(ctx, c.ID, store.PurposeJudge); err == nil {
		v.Judge = &e
	} else if !errors.Is(err, store.ErrNotFound) {
		return v, err
	}
	// Active jobs before the audit's counts: a job that ends in between has
	// saved its answers, so "finished" never shows with answers uncounted.
	active, err := jobs.ActiveAuditJobs(ctx, s.st, c.ID)
	if err != nil {
		return v, err
	}
	if a, err := s.st.GetVerifierAudit(ctx, c.ID); err == nil {
		v.Audit, v.Active = &a, active
		v.M, v.Seed = a.M, a.Seed
	} else if !errors.Is(err, store.ErrNotFound) {
		return v, err
	}
	m, err := auditM(r.URL.Query().Get("m"), v.M)
	if err != nil {
		v.Error = err.Error()
	} else {
		v.M = m
	}
	if pg, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && pg >= 1 && pg <= 1_000_000 {
		v.Page = pg
	}
	if sd := r.URL.Query().Get("seed"); sd != "" {
		if x, err := auditSeed(sd); err != nil {
			v.Error = err.Error()
		} else {
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
			seed, serr := auditSeed(r.PostForm.Get("seed"))
			if serr != nil {
				s.deny(w, r, http.StatusBadRequest, serr.Error())
				return
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

// apiVerifierAudit is GET /api/v1/comparisons/{id}/verifier-audit: the
// audit's state, what a new one would cost, and its figures.
type apiVerifierAudit struct {
	State         string          `json:"state"` // not started | running | finished | paused | failed
	Error         string          `json:"error,omitempty"`
	M             int             `json:"m"`
	Seed          uint64          `json:"seed"`
	Items         int64           `json:"items"`
	Answered      int64           `json:"answered"`
	Failed        int64           `json:"failed"`
	Requests      int64           `json:"requests"`
	TokensIn      int64           `json:"tokens_in"`
	TokensOut     int64           `json:"tokens_out"`
	Plan          *apiAuditPlan   `json:"plan"`
	Models        []apiAuditModel `json:"models"`
	Pairs         []apiAuditFlip  `json:"pairs"`
	Disagreements []apiAuditItem  `json:"disagreements"`
}

// apiAuditPlan is the cost of an audit of m random samples.
type apiAuditPlan struct {
	M                int   `json:"m"`
	DecidingProblems int   `json:"deciding_problems"`
	Deciding         int64 `json:"deciding"`
	Rest             int64 `json:"rest"`
	Requests         int64 `json:"requests"`
}

// apiRate is k of n with its 95% Wilson interval (lo 0, hi 1 when n = 0).
type apiRate struct {
	K  int     `json:"k"`
	N  int     `json:"n"`
	P  float64 `json:"p"`
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

type apiAuditModel struct {
	Model         string  `json:"model"`
	Items         int     `json:"items"`
	Answered      int     `json:"answered"`
	Unsure        int     `json:"unsure"`
	Failed        int     `json:"failed"`
	Disagreements int     `json:"disagreements"`
	Rate          apiRate `json:"rate"`
	RandomRate    apiRate `json:"random_rate"`
}

type apiAuditFlip struct {
	Other       string  `json:"other"`
	FoundBefore bool    `json:"k_star_found_before"`
	KBefore     float64 `json:"k_star_before"`
	FoundAfter  bool    `json:"k_star_found_after"`
	KAfter      float64 `json:"k_star_after"`
	// k*'s 95% paired-bootstrap intervals before and after the flip
	CIBefore        analysis.CrossoverCI `json:"k_star_ci_before"`
	CIAfter         analysis.CrossoverCI `json:"k_star_ci_after"`
	BaseOnlyBefore  int                  `json:"base_only_before"`
	BaseOnlyAfter   int                  `json:"base_only_after"`
	OtherOnlyBefore int                  `json:"other_only_before"`
	OtherOnlyAfter  int                  `json:"other_only_after"`
	Label           string               `json:"label"`
}

type apiAuditItem struct {
	Model          string `json:"model"`
	ProblemID      string `json:"problem_id"`
	SampleIndex    int    `json:"sample_index"`
	Stratum        string `json:"stratum"`
	ReachStatus    string `json:"reach_status"`
	ReachRule      string `json:"reach_rule"`
	ReachExtracted string `json:"reach_extracted"`
	Verdict        string `json:"verdict"`
	Reason         string `json:"reason"`
	Resolution     string `json:"resolution"`
}

func apiRateOf(iv audit.Interval) apiRate {
	return apiRate{K: iv.K, N: iv.N, P: iv.P, Lo: iv.Lo, Hi: iv.Hi}
}

// apiVerifierAuditGet answers GET /api/v1/comparisons/{id}/verifier-audit.
func (s *Server) apiVerifierAuditGet(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	v, err := s.verifierAuditView(r.Context(), r, c)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	out := apiVerifierAudit{State: v.State(), M: v.M, Seed: v.Seed, Models: []apiAuditModel{}, Pairs: []apiAuditFlip{}, Disagreements: []apiAuditItem{}}
	if a := v.Audit; a != nil {
		out.Error, out.Items, out.Answered, out.Failed = a.Error, a.Items, a.Answered, a.Errors
		out.Requests, out.TokensIn, out.TokensOut = a.Requests, a.TokensIn, a.TokensOut
	}
	if p := v.Plan; p != nil {
		out.Plan = &apiAuditPlan{M: p.M, DecidingProblems: p.DecidingProblems, Deciding: p.Deciding, Rest: p.Rest, Requests: p.Requests}
	}
	if sm := v.Summary; sm != nil {
		for _, m := range sm.Models {
			out.Models = append(out.Models, apiAuditModel{Model: m.Name, Items: m.Items, Answered: m.Answered, Unsure: m.Unsure,
				Failed: m.Errors, Disagreements: m.Disagreements, Rate: apiRateOf(m.Rate), RandomRate: apiRateOf(m.Random)})
		}
		for _, f := range sm.Flips {
			out.Pairs = append(out.Pairs, apiAuditFlip{Other: f.Other, FoundBefore: f.FoundBefore, KBefore: f.KBefore, FoundAfter: f.FoundAfter,
				KAfter: f.KAfter, CIBefore: *analysis.CrossoverCIOf(f.BandBefore), CIAfter: *analysis.CrossoverCIOf(f.BandAfter), BaseOnlyBefore: f.BaseOnlyBefore, BaseOnlyAfter: f.BaseOnlyAfter, OtherOnlyBefore: f.OtherOnlyBefore,
				OtherOnlyAfter: f.OtherOnlyAfter, Label: f.Label()})
		}
		for _, it := range sm.Disagreements {
			out.Disagreements = append(out.Disagreements, apiAuditItem{Model: it.ModelName, ProblemID: it.ProblemKey, SampleIndex: it.SampleIndex,
				Stratum: it.Stratum, ReachStatus: it.ReachStatus, ReachRule: it.ReachRule, ReachExtracted: it.ReachExtracted,
				Verdict: it.Verdict, Reason: it.Reason, Resolution: it.Resolution})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

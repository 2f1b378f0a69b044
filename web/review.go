package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// gradingErrors are the review verdicts that say a problem's verdicts
// cannot be trusted: ?without=grading-errors leaves those problems out.
var gradingErrors = []string{store.VerdictVerifierFP, store.VerdictWrongReference}

// reportOptionsFor is reportOptionsQ plus ?without=grading-errors, which
// needs the comparison's reviews.
func (s *Server) reportOptionsFor(r *http.Request, id int64) (analysis.Options, error) {
	return s.optionsFor(r.Context(), id, r.URL.Query())
}

// optionsFor is reportOptionsFor for a query q.
func (s *Server) optionsFor(ctx context.Context, id int64, q url.Values) (analysis.Options, error) {
	opt, err := reportOptionsQ(q)
	if err != nil || q.Get("without") != "grading-errors" {
		return opt, err
	}
	reviews, err := s.st.Reviews(ctx, id)
	if err != nil {
		return opt, err
	}
	opt.ExcludeProblems = map[int64]bool{}
	for k, rv := range reviews { // found in any pair: the problem's grading is wrong
		if slices.Contains(gradingErrors, rv.Verdict) {
			opt.ExcludeProblems[k.Problem] = true
		}
	}
	return opt, nil
}

// reviewSummary counts the verdicts on the base-only problems of rows
// (regions already set against the pair shown).
func reviewSummary(rows []analysis.ProblemRow, reviews map[int64]store.Review) views.ReviewSummary {
	n, counts, unreviewed := countReviews(rows, reviews, "base-only")
	return views.ReviewSummary{BaseOnly: n, Counts: counts, Unreviewed: unreviewed}
}

// rlOnlySummary counts the verdicts on the problems only the pair's other
// model solved (regions already set against the pair shown).
func rlOnlySummary(rows []analysis.ProblemRow, reviews map[int64]store.Review) views.RLOnlySummary {
	n, counts, unreviewed := countReviews(rows, reviews, "other-only")
	return views.RLOnlySummary{RLOnly: n, Counts: counts, Unreviewed: unreviewed}
}

// countReviews counts rows in region, their review verdicts and how many
// have none.
func countReviews(rows []analysis.ProblemRow, reviews map[int64]store.Review, region string) (n int, counts map[string]int, unreviewed int) {
	counts = map[string]int{}
	for _, row := range rows {
		if row.Region != region {
			continue
		}
		n++
		if rv, ok := reviews[row.ProblemID]; ok {
			counts[rv.Verdict]++
		} else {
			unreviewed++
		}
	}
	return n, counts, unreviewed
}

// reasoningLabel records a person's label of one sample's reasoning: POST
// label (valid, flawed, or empty to remove it), note. It overrides the
// judge in CoT-pass@k.
func (s *Server) reasoningLabel(w http.ResponseWriter, r *http.Request) {
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
	label, note := r.PostForm.Get("label"), strings.TrimSpace(r.PostForm.Get("note"))
	if label != "" && label != store.ReasoningValid && label != store.ReasoningFlawed {
		s.deny(w, r, http.StatusBadRequest, "Label the reasoning valid or flawed.")
		return
	}
	if err := tooLong("Note", note, maxNote); err != nil {
		s.deny(w, r, http.StatusBadRequest, err.Error())
		return
	}
	err = s.st.SetReasoningLabel(r.Context(), store.ReasoningLabel{ComparisonID: c.ID, RunID: rid, ProblemID: p.ID, SampleIndex: idx,
		Label: label, Note: note, UserID: currentUser(r).ID})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, sampleBack(r, c, p.ID, rid, idx), http.StatusSeeOther)
}

// unreviewedNeighbours finds, among the rows of region in dataset order,
// the previous and next problem around pid without a review (0 = none).
func unreviewedNeighbours(rows []analysis.ProblemRow, region string, pid int64, reviews map[int64]store.Review) (prev, next int64) {
	at := slices.IndexFunc(rows, func(r analysis.ProblemRow) bool { return r.ProblemID == pid })
	if at < 0 {
		return 0, 0
	}
	open := func(r analysis.ProblemRow) bool {
		_, done := reviews[r.ProblemID]
		return r.Region == region && !done
	}
	for i := at - 1; i >= 0; i-- {
		if open(rows[i]) {
			prev = rows[i].ProblemID
			break
		}
	}
	for i := at + 1; i < len(rows); i++ {
		if open(rows[i]) {
			next = rows[i].ProblemID
			break
		}
	}
	return prev, next
}

// problemOf reads {pid} and checks it belongs to the comparison's dataset.
func (s *Server) problemOf(r *http.Request, c store.Comparison) (store.Problem, error) {
	pid, err := idParam(r, "pid")
	if err != nil {
		return store.Problem{}, err
	}
	p, err := s.st.GetProblem(r.Context(), pid)
	if err != nil {
		return p, err
	}
	return p, problemIn(c, p)
}

// problemIn is store.ErrNotFound (a 404) unless p is a problem of c's
// dataset.
func problemIn(c store.Comparison, p store.Problem) error {
	if c.DatasetID == nil || p.DatasetID != *c.DatasetID {
		return fmt.Errorf("problem %d is not in comparison %d: %w", p.ID, c.ID, store.ErrNotFound)
	}
	return nil
}

// review records a verdict on a problem: POST verdict, note.
func (s *Server) review(w http.ResponseWriter, r *http.Request) {
	id, _ := idParam(r, "id")
	c, err := s.st.GetComparison(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := s.problemOf(r, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	verdict, note := r.PostForm.Get("verdict"), strings.TrimSpace(r.PostForm.Get("note"))
	if !store.IsReviewVerdict(verdict) {
		s.deny(w, r, http.StatusBadRequest, fmt.Sprintf("Unknown verdict %q.", verdict))
		return
	}
	if err := tooLong("Note", note, maxNote); err != nil {
		s.deny(w, r, http.StatusBadRequest, err.Error())
		return
	}
	// The pair the verdict is about: the form's (an index into the runs,
	// 1 = the first other model).
	pair := 1
	if v := r.PostForm.Get("pair"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n >= len(c.Runs) {
			s.deny(w, r, http.StatusBadRequest, fmt.Sprintf("No pair %q in this comparison: it has %d other models.", v, len(c.Runs)-1))
			return
		}
		pair = n
	}
	err = s.st.SetReview(r.Context(), store.Review{ComparisonID: id, ProblemID: p.ID, OtherRunID: c.Runs[pair].ID, Verdict: verdict, Note: note,
		ReviewerID: currentUser(r).ID})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	back := problemBack(r, id, p.ID)
	if pair > 1 && !r.PostForm.Has("list") {
		back += fmt.Sprintf("?pair=%d", pair)
	}
	http.Redirect(w, r, back+"#review", http.StatusSeeOther)
}

// problemBack is the problem page a form on it returns to, in the list the
// reviewer moves through (the form's list field), so j / k keep the
// table's order after a review, an override or a reasoning label.
func problemBack(r *http.Request, comparisonID, problemID int64) string {
	back := fmt.Sprintf("/comparisons/%d/problems/%d", comparisonID, problemID)
	if r.PostForm.Has("list") {
		back += "?list=" + url.QueryEscape(clip(r.PostForm.Get("list"), 2000))
	}
	return back
}

// sampleBack is problemBack at sample idx of run rid, its model's section
// open (a model beyond the first pair is closed unless ?open= names it).
func sampleBack(r *http.Request, c store.Comparison, problemID, rid int64, idx int) string {
	back := problemBack(r, c.ID, problemID)
	if at := slices.IndexFunc(c.Runs, func(run store.Run) bool { return run.ID == rid }); at > 1 {
		sep := "?"
		if strings.Contains(back, "?") {
			sep = "&"
		}
		back += fmt.Sprintf("%sopen=%d", sep, at)
	}
	return back + fmt.Sprintf("#sample-%d-%d", rid, idx)
}

// overrideSample changes one sample's verdict: POST status (correct or
// incorrect), note. The run's counts are recomputed before the redirect,
// so the report the reviewer opens next already reflects it; the
// statistics job is enqueued for the intervals.
func (s *Server) overrideSample(w http.ResponseWriter, r *http.Request) {
	id, _ := idParam(r, "id")
	c, err := s.st.GetComparison(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, rid, idx, err := s.sampleOf(r, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if c.Status != store.StatusReady {
		s.render(w, r, http.StatusConflict, views.ErrorPage(409, "Not ready", "This comparison is "+c.Status+"; override verdicts once it is ready."))
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	status := r.PostForm.Get("status")
	if status != store.SampleCorrect && status != store.SampleIncorrect {
		s.deny(w, r, http.StatusBadRequest, "Choose correct or incorrect.")
		return
	}
	note := strings.TrimSpace(r.PostForm.Get("note"))
	if err := tooLong("Note", note, maxNote); err != nil {
		s.deny(w, r, http.StatusBadRequest, err.Error())
		return
	}
	_, err = s.st.OverrideSample(r.Context(), store.SampleOverride{ComparisonID: id, RunID: rid, ProblemID: p.ID, SampleIndex: idx,
		Status: status, UserID: currentUser(r).ID, Note: note})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if s.jobs != nil {
		if err := jobs.StartStats(r.Context(), s.jobs, id); err != nil {
			s.log.Warn("enqueue statistics", "comparison", id, "err", err)
		}
	}
	http.Redirect(w, r, sampleBack(r, c, p.ID, rid, idx), http.StatusSeeOther)
}

func (s *Server) auditPage(w http.ResponseWriter, r *http.Request) {
	id, _ := idParam(r, "id")
	c, err := s.st.GetComparison(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	es, err := s.st.Audit(r.Context(), id, 0)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.AuditPage(c, es))
}

// apiReview is one review in GET /api/v1/comparisons/{id}/reviews.
type apiReview struct {
	ProblemID string    `json:"problem_id"`
	Other     string    `json:"other"` // the pair's other model (the base model is always the first)
	Region    string    `json:"region"`
	Verdict   string    `json:"verdict"`
	Note      string    `json:"note"`
	Reviewer  string    `json:"reviewer"`
	UpdatedAt time.Time `json:"updated_at"`
}

// apiPairReviews summarises one pair's reviews.
type apiPairReviews struct {
	Other      string         `json:"other"`
	BaseOnly   int            `json:"base_only"`
	Counts     map[string]int `json:"counts"`
	Unreviewed int            `json:"unreviewed"`
	// The other-only problems' verdicts, counted apart.
	RLOnly           int            `json:"rl_only"`
	RLOnlyCounts     map[string]int `json:"rl_only_counts"`
	RLOnlyUnreviewed int            `json:"rl_only_unreviewed"`
}

// apiReviewsAnswer is GET /api/v1/comparisons/{id}/reviews: the first
// pair's summary at the top, then every pair's and every review.
type apiReviewsAnswer struct {
	apiPairReviews
	Pairs   []apiPairReviews `json:"pairs"`
	Reviews []apiReview      `json:"reviews"`
}

// apiReviews lists a comparison's reviews, each with its pair, and sums
// them up per pair; the top-level summary is the first pair's.
func (s *Server) apiReviews(w http.ResponseWriter, r *http.Request) {
	id, _ := idParam(r, "id")
	e, err := s.reports.Get(r.Context(), id, analysis.Options{})
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	rep := e.Report
	all, err := s.st.Reviews(r.Context(), id)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	out := apiReviewsAnswer{Pairs: []apiPairReviews{}, Reviews: []apiReview{}}
	for pair := 1; pair < len(rep.Models); pair++ {
		rows := pairRows(e, pair)
		reviews := all.Of(rep.Models[pair].RunID)
		for _, row := range rows {
			if rv, ok := reviews[row.ProblemID]; ok {
				out.Reviews = append(out.Reviews, apiReview{ProblemID: row.Key, Other: rep.Models[pair].Name, Region: row.Region, Verdict: rv.Verdict,
					Note: rv.Note, Reviewer: rv.ReviewerEmail, UpdatedAt: rv.UpdatedAt})
			}
		}
		rs := memoRegions(e, pair)
		sum, rl := reviewSummaryOf(rs.baseOnly, reviews), rlOnlySummaryOf(rs.otherOnly, reviews)
		out.Pairs = append(out.Pairs, apiPairReviews{Other: rep.Models[pair].Name, BaseOnly: sum.BaseOnly, Counts: sum.Counts, Unreviewed: sum.Unreviewed,
			RLOnly: rl.RLOnly, RLOnlyCounts: rl.Counts, RLOnlyUnreviewed: rl.Unreviewed})
	}
	if len(out.Pairs) > 0 {
		out.apiPairReviews = out.Pairs[0]
	}
	writeJSON(w, http.StatusOK, out)
}

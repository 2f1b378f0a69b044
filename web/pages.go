package web

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/maypok86/otter/v2"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/charts"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

func idParam(r *http.Request, name string) (int64, error) {
	id, err := strconv.ParseInt(chi.URLParam(r, name), 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%s %q: %w", name, chi.URLParam(r, name), store.ErrNotFound)
	}
	return id, nil
}

// comparisonParam loads the comparison named by the {id} URL parameter; on
// failure it has written the error page (404 for an unknown id) and
// returns false.
func (s *Server) comparisonParam(w http.ResponseWriter, r *http.Request) (store.Comparison, bool) {
	id, err := idParam(r, "id")
	if err != nil {
		s.fail(w, r, err)
		return store.Comparison{}, false
	}
	c, err := s.st.GetComparison(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return c, false
	}
	return c, true
}

func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	u := currentUser(r)
	cs, err := s.st.ListComparisonsFor(r.Context(), u.ID, u.IsAdmin)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ps, err := s.editableProjects(r.Context(), u)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.Home(cs, len(ps) > 0))
}

// comparison shows the report when the comparison is ready, and its live
// progress (or the mapping to confirm) before that.
func (s *Server) comparison(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	id := c.ID
	switch c.Status {
	case store.StatusNeedsMapping:
		http.Redirect(w, r, fmt.Sprintf("/comparisons/%d/mapping", id), http.StatusSeeOther)
		return
	case store.StatusConfigured:
		v, err := s.setupView(r.Context(), c)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		s.render(w, r, http.StatusOK, views.SamplingSetup(v))
		return
	case store.StatusReady:
	default:
		s.progressPage(w, r, c)
		return
	}
	opt, err := s.reportOptionsFor(r, id) // ?exclude=guessable, ?estimator=biased, ?without=grading-errors
	if err != nil {
		s.fail(w, r, err)
		return
	}
	e, err := s.reports.Get(r.Context(), id, opt)
	if errors.Is(err, analysis.ErrNotReady) {
		// The comparison left ready between the two reads (a followed
		// folder's new step, a re-grade): show where its jobs stand.
		if c, err = s.st.GetComparison(r.Context(), id); err == nil && c.Status != store.StatusReady {
			s.progressPage(w, r, c)
			return
		}
		if err == nil {
			err = fmt.Errorf("comparison %d: %w", id, analysis.ErrNotReady)
		}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.reportView(c, e, opt, r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.renderPage(w, r, http.StatusOK, views.ReportPage(v), c.ID)
}

// progressPage shows a comparison that is not ready: where its jobs stand.
func (s *Server) progressPage(w http.ResponseWriter, r *http.Request, c store.Comparison) {
	v, err := s.progressView(r, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.ProgressPage(v))
}

func (s *Server) progressView(r *http.Request, c store.Comparison) (views.ProgressView, error) {
	ps, err := s.st.ProgressForComparison(r.Context(), c.ID)
	if err != nil {
		return views.ProgressView{}, err
	}
	v := views.ProgressView{C: c, Stages: map[int64][]store.Progress{}, CanEdit: perms(routeRole(r)).Edit, CanManage: perms(routeRole(r)).Manage}
	if c.Status == store.StatusFailed {
		if v.CanRetry, err = s.st.CanRetryImport(r.Context(), c.ID); err != nil {
			return v, err
		}
	}
	if v.Follow, err = s.followView(r.Context(), c, v.CanEdit); err != nil {
		return v, err
	}
	for _, p := range ps {
		v.Stages[p.RunID] = append(v.Stages[p.RunID], p)
	}
	if c.Sampling != nil {
		sp, err := s.st.SamplingProgressFor(r.Context(), c.ID)
		if err != nil {
			return v, err
		}
		v.Sampling = samplingRows(c, sp)
		var drawn int64
		for _, p := range sp {
			drawn += p.Samples
		}
		if v.Adaptive, err = jobs.AdaptiveProgress(r.Context(), s.st, c, drawn); err != nil {
			return v, err
		}
	}
	return v, nil
}

func (s *Server) progress(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	id := c.ID
	v, err := s.progressView(r, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// The page itself changes once the jobs are done (report), or the
	// dataset of an endpoint comparison is loaded (setup).
	done := c.Status == store.StatusReady || c.Status == store.StatusConfigured || c.Status == store.StatusNeedsMapping
	if done && r.Header.Get("HX-Request") == "true" {
		w.Header().Set("HX-Redirect", fmt.Sprintf("/comparisons/%d", id))
	}
	s.render(w, r, http.StatusOK, views.ProgressFragment(v))
}

// regionOf names a problem's solved-set region for a base/other pair.
func regionOf(base, other passk.Count) string {
	b, o := base.C >= 1, other.C >= 1
	switch {
	case b && o:
		return "both"
	case b:
		return "base-only"
	case o:
		return "other-only"
	}
	return "neither"
}

var regionOrder = map[string]int{"base-only": 0, "other-only": 1, "both": 2, "neither": 3}

// vennRegions maps the region names of the Venn chart's links (a-only,
// b-only) to the problem table's.
var vennRegions = map[string]string{charts.RegionAOnly: "base-only", charts.RegionBOnly: "other-only"}

// reportOptionsQ reads the report variant from a page's query q:
// ?exclude=guessable leaves out guessable problems, ?estimator=biased adds
// the biased estimator's curves (unbiased, or none, is the default),
// ?min_n=N (2 <= N <= 10^7) leaves out the problems on which some model
// has fewer than N samples. Any other value of these, and a search text
// or answer filter (?q=, ?answer=) over maxQuery characters, is a
// formError naming the parameter: a view is never silently replaced by
// another (?min_n=abc showed every problem).
func reportOptionsQ(q url.Values) (analysis.Options, error) {
	var opt analysis.Options
	switch v := q.Get("exclude"); v {
	case "":
	case "guessable":
		opt.ExcludeGuessable = true
	default:
		return opt, badForm("?exclude=%q: the only value is guessable (leave out the guessable problems)", v)
	}
	switch v := q.Get("estimator"); v {
	case "", "unbiased":
	case "biased":
		opt.Biased = true
	default:
		return opt, badForm("?estimator=%q: want biased (the curves of 1 − (1 − c/n)^k added) or unbiased", v)
	}
	if v := q.Get("without"); v != "" && v != "grading-errors" {
		return opt, badForm("?without=%q: the only value is grading-errors (leave out problems reviewed as grading errors)", v)
	}
	if v := q.Get("min_n"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 || n > 10_000_000 {
			return opt, badForm("?min_n=%q: want a whole number from 2 to 10000000 (problems where some model has fewer samples are left out)", v)
		}
		opt.MinN = n
	}
	for _, key := range []string{"q", "answer"} {
		if err := checkQueryText(q, key); err != nil {
			return opt, err
		}
	}
	return opt, nil
}

// checkQueryText refuses ?key= (a search text or an answer filter) over
// maxQuery characters: cut, it would search for something else.
func checkQueryText(q url.Values, key string) error {
	if n := utf8.RuneCountInString(strings.TrimSpace(q.Get(key))); n > maxQuery {
		return badForm("?%s= is %d characters long: at most %d are searched; shorten it", key, n, maxQuery)
	}
	return nil
}

// reportView prepares the comparison page. When the report's bootstrap
// intervals are missing or stale it enqueues the statistics job and the
// page shows point estimates meanwhile.
func (s *Server) reportView(c store.Comparison, e *analysis.Entry, opt analysis.Options, r *http.Request) (views.ReportView, error) {
	rep := e.Report // shared between requests: read only
	q := r.URL.Query()
	// The page's small reads in one round trip (one at a time, each waited
	// for a wake-up of Postgres and of this handler: on a busy machine
	// that cost more than the queries).
	var (
		all         store.Reviews
		note        store.Note
		follow      store.Follow
		followFound bool
		debate      debateReads
	)
	err := s.st.Batch(r.Context(), append([]store.Queued{s.st.ReviewsInto(c.ID, &all), s.st.NoteInto(c.ID, &note),
		s.st.LatestFollowInto(c.ID, &follow, &followFound)}, debate.queue(s.st, c.ID)...)...)
	if err != nil {
		return views.ReportView{}, err
	}
	if rep.Stats.Status == analysis.StatsPending && s.jobs != nil {
		if err := jobs.StartStats(r.Context(), s.jobs, c.ID); err != nil {
			s.log.Warn("enqueue statistics", "comparison", c.ID, "err", err)
		}
	}
	f := tableFilter(q, rep, opt)
	// Reviews belong to a problem and a pair: the page shows the pair's.
	reviews := all.Of(rep.Models[f.Pair].RunID)
	v := views.ReportView{C: c, R: rep, Filter: f, Opt: opt, Reviews: reviews,
		Can: perms(routeRole(r))}
	v.ProblemID = problemIDs(e)
	if v.Notes, err = noteViewOf(note); err != nil {
		return v, err
	}
	var followErr error
	if !followFound {
		followErr = store.ErrNotFound
	}
	if v.Follow, err = s.followViewOf(r.Context(), c, v.Can.Edit, follow, followErr); err != nil {
		return v, err
	}
	if v.Code, err = s.codeInfo(r, c, e); err != nil {
		return v, err
	}
	if cfg, err := jobs.ParseSamplingConfig(c.Sampling); err == nil && c.Sampling != nil {
		v.SampledN = cfg.N
	}
	// How the comparison was graded counts samples (a scan of every one at
	// a million): once per report version, which every re-grading moves.
	g, err := e.Memo("grading", func() (any, error) { return s.gradingView(r.Context(), c) })
	if err != nil {
		return v, err
	}
	v.Grading = g.(views.GradingView)
	v.Grading.Policy = c.GradingPolicy
	// Regions, subjects and levels once per report and pair (a pass over
	// every row); the review counts per request, over the solved sets only.
	rs := memoRegions(e, f.Pair)
	v.Regions, v.Subjects, v.Levels = rs.regions, rs.subjects, rs.levels
	v.Review = reviewSummaryOf(rs.baseOnly, reviews)
	v.RLReview = rlOnlySummaryOf(rs.otherOnly, reviews)
	// A grading error is the problem's, whichever pair it was found in.
	flagged := map[int64]bool{}
	for k, rv := range all {
		if slices.Contains(gradingErrors, rv.Verdict) {
			flagged[k.Problem] = true
		}
	}
	v.GradingErrors = len(flagged)
	// The problem table: rendered once per report, view (the query) and
	// reviews, and kept (a quarter of the page's CPU, and its search and
	// statement queries).
	tkey := tableKey(e, r.URL.RawQuery, reviews)
	if html, ok := renderedTables.GetIfPresent(tkey); ok {
		v.TableHTML = html
	} else {
		if err := s.problemRows(r, e, c, reviews, &v); err != nil {
			return v, err
		}
		var b strings.Builder
		if err := views.ProblemTable(v).Render(r.Context(), &b); err != nil {
			return v, fmt.Errorf("render the problem table: %w", err)
		}
		v.TableHTML = b.String()
		if !v.Search.Building { // kept only once the search index can serve it
			renderedTables.Set(tkey, v.TableHTML)
		}
	}
	cs, err := memoCharts(e, c.ID, opt, f.Pair, true)
	v.Crossover, v.Venns, v.VennPairs, v.Histogram, v.Stats = cs.crossover, cs.venns, cs.vennPairs, cs.histogram, cs.stats
	if err != nil {
		return v, err
	}
	eps, epsErr := supportEps(r)
	if epsErr != nil {
		v.Debate.EpsError = epsErr.Error()
	}
	dc, err := memoDebateCharts(e, c.ID, eps)
	dc.EpsError = v.Debate.EpsError
	v.Debate = dc
	if err != nil {
		return v, err
	}
	v.DebateSetup, err = s.debateViewOf(r.Context(), c, v.Can.Edit, debate)
	return v, err
}

// problemRows fills the problem table's page of rows (v.Filter holds the
// view): the matching problems in the table's order, that page of them and
// their statement previews.
func (s *Server) problemRows(r *http.Request, e *analysis.Entry, c store.Comparison, reviews map[int64]store.Review, v *views.ReportView) error {
	rep, f := e.Report, v.Filter
	order, err := s.tableOrder(r.Context(), e, c, reviews, f, &v.Search)
	if err != nil {
		return err
	}
	// One page of the table: the page stays small at 12,500 problems.
	v.Matching = len(order)
	v.Pages = max(1, (len(order)+views.ProblemsPerPage-1)/views.ProblemsPerPage)
	f.Page = 1
	if p, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && p >= 1 {
		f.Page = min(p, v.Pages)
	}
	v.Filter = f
	lo := (f.Page - 1) * views.ProblemsPerPage
	for _, i := range order[lo:min(lo+views.ProblemsPerPage, len(order))] {
		row := rep.Rows[i]
		row.Region = rowRegion(rep, f.Pair, i)
		v.Rows = append(v.Rows, row)
	}
	v.Previews, err = s.previews(r.Context(), v.Rows)
	return err
}

// renderedTables keeps rendered problem tables (about 75 KB each) by
// tableKey.
var renderedTables = otter.Must(&otter.Options[[sha256.Size]byte, string]{
	MaximumWeight: 32 << 20,
	Weigher:       func(_ [sha256.Size]byte, html string) uint32 { return uint32(min(len(html)+64, math.MaxUint32)) },
})

// tableKey names everything the problem table shows: the report (its
// entry, which is never changed), the view (the page's query: filters,
// sort, search, page, variant) and every review (the verdict filter and
// the review column). The statements and completions a search reads do not
// change under one report.
func tableKey(e *analysis.Entry, rawQuery string, reviews map[int64]store.Review) [sha256.Size]byte {
	k := newKeyHash()
	k.num(int64(e.ID))
	k.str(rawQuery)
	ids := make([]int64, 0, len(reviews))
	for id := range reviews {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		rv := reviews[id]
		k.num(id)
		k.str(rv.Verdict)
		k.str(rv.Note)
		k.str(rv.ReviewerEmail)
		k.num(rv.UpdatedAt.UnixNano())
	}
	return k.sum()
}

// deleteConfirm asks before a comparison is deleted, saying what goes.
func (s *Server) deleteConfirm(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	var total int64
	if c.Status == store.StatusReady {
		// Stored as of each run's last aggregation: counting would read
		// every sample of the comparison (seconds at millions).
		totals, err := s.st.SampleTotals(r.Context(), c.ID)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		for _, n := range totals {
			total += n
		}
	} else {
		// Mid-import or failed: what is stored now.
		for _, run := range c.Runs {
			n, _, err := s.st.CountSamples(r.Context(), run.ID)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			total += n
		}
	}
	s.render(w, r, http.StatusOK, views.DeleteConfirm(views.DeleteView{C: c, Samples: total}))
}

// deleteComparison deletes a comparison: the page's form is sent home,
// the API (DELETE /api/v1/comparisons/{id}) answers 204.
func (s *Server) deleteComparison(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err == nil {
		// Not cancelled with the request: a delete of millions of samples
		// takes minutes (README "Lab scale"), longer than a browser or a
		// proxy waits, and should still finish.
		err = s.st.DeleteComparison(context.WithoutCancel(r.Context()), id)
	}
	if err == nil && s.jobs != nil { // its runs' search indexes are dropped by a job
		if qerr := jobs.StartSearchIndex(r.Context(), s.jobs); qerr != nil {
			slog.Warn("enqueue search index job", "comparison", id, "err", qerr)
		}
	}
	switch {
	case err != nil && isAPI(r):
		s.apiFail(w, r, err)
	case err != nil:
		s.fail(w, r, err)
	case isAPI(r):
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Redirect(w, r, "/", http.StatusSeeOther)
	}
}

// codeInfo says whether a comparison has code problems and whether this
// server can grade them.
func (s *Server) codeInfo(r *http.Request, c store.Comparison, e *analysis.Entry) (views.CodeInfo, error) {
	var ci views.CodeInfo
	if c.DatasetID == nil {
		return ci, nil
	}
	// A dataset's problems never change: its code problems are counted once
	// per report (a scan of the dataset, 3 ms at 12,500 problems).
	n, err := e.Memo("code-problems", func() (any, error) { return s.st.CountKind(r.Context(), *c.DatasetID, "code") })
	if err != nil {
		return ci, err
	}
	ci.Problems = n.(int)
	if ci.Problems > 0 && s.cfg.CodeGrading != nil {
		ci.Unavailable = s.cfg.CodeGrading.Error()
	}
	for _, run := range c.Runs {
		ci.Harness = append(ci.Harness, run.CodeHarness)
	}
	return ci, nil
}

// samplesShown is how many samples per model the problem page shows before
// "show more".
const samplesShown = 16

func (s *Server) problem(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, err := idParam(r, "id")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	pid, err := idParam(r, "pid")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := views.ProblemView{ShowAll: r.URL.Query().Get("all") == "1", Can: perms(routeRole(r))}
	limit := samplesShown
	if v.ShowAll {
		limit = 4096
	}
	if err := checkQueryText(r.URL.Query(), "answer"); err != nil {
		s.fail(w, r, err)
		return
	}
	if q := r.URL.Query(); q.Has("answer") {
		a := clip(strings.TrimSpace(q.Get("answer")), maxQuery)
		v.Answer = &a
	}
	// Everything the page reads, in one round trip to Postgres (a dozen
	// small queries: one at a time, each waited for a wake-up of the
	// database and of this handler, which on a busy machine cost more than
	// the queries). The models whose samples show are named by their place
	// among the runs, as ?pair= names them: their ids are not known yet.
	var (
		answers   []store.AnswerCount
		counts    map[int64]store.Count
		samples   map[int64][]store.Sample
		all       store.Reviews
		version   string
		reasoning store.Reasoning
	)
	err = s.st.Batch(ctx, s.st.ComparisonInto(id, &v.C), s.st.ProblemInto(pid, &v.P),
		s.st.AnswerCountsInto(id, pid, &answers), s.st.ProblemCountsInto(id, pid, &counts),
		s.st.ReviewsInto(id, &all),
		s.st.AuditInto(id, pid, &v.History), s.st.ReportVersionInto(id, &version), s.st.ReasoningInto(id, pid, &reasoning))
	if err == nil {
		err = problemIn(v.C, v.P)
	}
	// The pair the page is about: ?pair= (or the list's), else the first;
	// its region, review and neighbours are against that pair's other
	// model. Its samples (and those with token scores) are read in a
	// second round trip, by run id, so that Postgres plans only those
	// runs' partitions.
	v.Pair = problemPair(r, v.C)
	open := openModels(r, int64(v.Pair))
	if err == nil {
		err = s.st.Batch(ctx, s.st.ProblemSamplesInto(store.ProblemRunsShown(v.C, open), pid, limit, v.Answer, &samples),
			s.st.TokenScoredSamplesInto(id, store.RunIDs(v.C), pid, &v.TokenSamples, &v.TokensSetUp))
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c, p := v.C, v.P
	v.Judgments, v.Labels, v.Scores = reasoning.Judgments, reasoning.Labels, reasoning.Scores
	var uncounted map[int64]map[string]int
	var complete bool
	v.Answers, v.OtherAnswers, complete, uncounted = answerGroups(c, answers, p.Kind)
	v.AnswersByTextOnly = !complete
	v.Models = problemModels(c, counts, samples, uncounted, open)
	answerMore(&v)
	reviews := all.Of(c.Runs[v.Pair].ID)
	v.PairOther = c.Runs[v.Pair].ModelName
	if rv, ok := reviews[p.ID]; ok {
		v.Review = &rv
	}
	if c.Status == store.StatusReady {
		if e, err := s.reports.GetAt(ctx, id, analysis.Options{}, version); err == nil && v.Pair < len(e.Report.Models) {
			rows := pairRows(e, v.Pair)
			// Without a list: j / k go through the problem's solved set in
			// dataset order, J / K through its unreviewed problems.
			v.Region, v.Prev, v.Next = neighbours(rows, p.ID)
			v.PrevOpen, v.NextOpen = unreviewedNeighbours(rows, v.Region, p.ID, reviews)
			v.RLOnly = v.Region == "other-only"
			if v.Region == "base-only" {
				v.Reviewing = true
				v.ReviewSum = reviewSummary(rows, reviews)
			}
		}
		if list, ok := listParam(r.URL.Query()); ok {
			if err := s.listNeighbours(ctx, c, p.ID, list, reviews, &v); err != nil {
				s.fail(w, r, err)
				return
			}
		}
	}
	if err := s.textMatches(ctx, r.URL.Query(), &v); err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.ProblemPage(v))
}

// maxList bounds ?list=, the table view a problem page moves through: a
// view with a 200-character query of 4-byte characters is about 2,600
// characters once percent-encoded.
const maxList = 8192

// listParam is ?list= (the table's view a problem page was opened from)
// when it is there and at most maxList characters, without NUL and
// invalid UTF-8; a longer one is dropped whole (no list), never cut: a cut
// view searched a shorter query and moved through other problems.
func listParam(q url.Values) (string, bool) {
	if !q.Has("list") {
		return "", false
	}
	list := clip(q.Get("list"), maxList+1)
	if utf8.RuneCountInString(list) > maxList {
		return "", false
	}
	return list, true
}

// textMatchesShown is how many matching samples a problem page links per
// model.
const textMatchesShown = 50

// textMatches fills, for a problem page opened from a search in
// completions (its ?list= holds q= and in=completions or both), which
// samples of each open model with texts contain the query: the page shows
// a model's first samples only, and the match may be in none of them.
func (s *Server) textMatches(ctx context.Context, q url.Values, v *views.ProblemView) error {
	raw, ok := listParam(q)
	if !ok {
		return nil
	}
	list, err := url.ParseQuery(raw)
	if err != nil {
		return nil // a mangled list: no search to show
	}
	// The table refuses a query over maxQuery characters (HTTP 400): a
	// longer one is no search of it, not one to cut.
	text := clip(strings.TrimSpace(list.Get("q")), maxQuery+1)
	if in := list.Get("in"); text == "" || utf8.RuneCountInString(text) > maxQuery || (in != "completions" && in != "both") {
		return nil
	}
	var runs []int64
	var read []int // index into v.TextMatches of each run read
	for _, m := range v.Models {
		if !m.Open || !m.Run.HasTexts {
			continue
		}
		tm := views.TextMatch{Model: m.Run.ModelName, N: m.N, SampleMatches: store.SampleMatches{RunID: m.Run.ID}}
		if m.N > views.TextMatchesMaxSamples {
			tm.Skipped = true
		} else {
			runs, read = append(runs, m.Run.ID), append(read, len(v.TextMatches))
		}
		v.TextMatches = append(v.TextMatches, tm)
	}
	if len(v.TextMatches) == 0 {
		return nil
	}
	got, err := s.st.SamplesContaining(ctx, runs, v.P.ID, text, textMatchesShown)
	if err != nil {
		return err
	}
	for i, j := range read {
		v.TextMatches[j].SampleMatches = got[i]
	}
	v.TextQuery = text
	return nil
}

// answerMore sets, with ?answer=, how many more samples with that answer
// each model has than it shows ("show more").
func answerMore(v *views.ProblemView) {
	if v.Answer == nil {
		return
	}
	for i := range v.Models {
		n := 0
		for _, g := range v.Answers {
			for _, m := range g.Members {
				if m.Answer == *v.Answer {
					n = m.N[i]
				}
			}
		}
		v.Models[i].More = max(0, n-len(v.Models[i].Samples))
	}
}

// openModels are the models (places among the comparison's runs: 0 is the
// base model) whose samples a problem page shows with their texts: the
// base model, the pair's other model and those ?open= names. That is every
// model of a pair; of a training run's 11 models the others' sections load
// their samples when opened (problemModelSamples): 11 models' texts cost
// 5 times a pair's.
func openModels(r *http.Request, pair int64) []int64 {
	open := []int64{0, pair}
	for _, o := range r.URL.Query()["open"] {
		if i, err := strconv.ParseInt(o, 10, 64); err == nil && i > 0 && !slices.Contains(open, i) && len(open) < 64 {
			open = append(open, i)
		}
	}
	return open
}

// problemModelSamples is one model's samples on a problem page, the
// fragment its section loads when opened ({model}: its place among the
// runs; the page's answer, all and list as the page reads them): the same
// boxes the page shows of an open model.
func (s *Server) problemModelSamples(w http.ResponseWriter, r *http.Request) {
	id, _ := idParam(r, "id")
	pid, err := idParam(r, "pid")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	model, err := strconv.ParseInt(chiParam(r, "model"), 10, 64)
	if err != nil || model < 0 {
		s.fail(w, r, fmt.Errorf("model %q: %w", chiParam(r, "model"), store.ErrNotFound))
		return
	}
	v := views.ProblemView{ShowAll: r.URL.Query().Get("all") == "1", Can: perms(routeRole(r))}
	limit := samplesShown
	if v.ShowAll {
		limit = 4096
	}
	q := r.URL.Query()
	if err := checkQueryText(q, "answer"); err != nil {
		s.fail(w, r, err)
		return
	}
	if q.Has("answer") {
		a := clip(strings.TrimSpace(q.Get("answer")), maxQuery)
		v.Answer = &a
	}
	if list, ok := listParam(q); ok {
		v.InList, v.List = true, list
	}
	var (
		answers   []store.AnswerCount
		counts    map[int64]store.Count
		samples   map[int64][]store.Sample
		reasoning store.Reasoning
	)
	open := []int64{model}
	err = s.st.Batch(r.Context(), s.st.ComparisonInto(id, &v.C), s.st.ProblemInto(pid, &v.P),
		s.st.AnswerCountsInto(id, pid, &answers), s.st.ProblemCountsInto(id, pid, &counts),
		s.st.ReasoningInto(id, pid, &reasoning))
	if err == nil {
		err = problemIn(v.C, v.P)
	}
	if err == nil && model >= int64(len(v.C.Runs)) {
		err = fmt.Errorf("model %d of comparison %d: %w", model, id, store.ErrNotFound)
	}
	if err == nil {
		err = s.st.Batch(r.Context(), s.st.ProblemSamplesInto(store.ProblemRunsShown(v.C, open), pid, limit, v.Answer, &samples))
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v.Pair = problemPair(r, v.C)
	v.Judgments, v.Labels, v.Scores = reasoning.Judgments, reasoning.Labels, reasoning.Scores
	v.Answers, v.OtherAnswers, _, _ = answerGroups(v.C, answers, v.P.Kind)
	v.Models = problemModels(v.C, counts, samples, nil, open)
	answerMore(&v)
	s.render(w, r, http.StatusOK, views.ModelSamples(v, v.Models[model]))
}

// sampleOf reads the {pid}, {rid} and {idx} of a sample's route: a problem
// of c's dataset, one of c's runs and a sample index ≥ 0; anything else is
// store.ErrNotFound (a 404).
func (s *Server) sampleOf(r *http.Request, c store.Comparison) (store.Problem, int64, int, error) {
	p, err := s.problemOf(r, c)
	if err != nil {
		return p, 0, 0, err
	}
	rid, err := idParam(r, "rid")
	if err != nil || !slices.ContainsFunc(c.Runs, func(run store.Run) bool { return run.ID == rid }) {
		return p, 0, 0, fmt.Errorf("run %s of comparison %d: %w", chiParam(r, "rid"), c.ID, store.ErrNotFound)
	}
	idx, err := strconv.Atoi(chiParam(r, "idx"))
	if err != nil || idx < 0 {
		return p, 0, 0, fmt.Errorf("sample %q: %w", chiParam(r, "idx"), store.ErrNotFound)
	}
	return p, rid, idx, nil
}

// sampleText serves one sample's whole completion as plain text (the
// problem page shows the first store.CompletionShown characters): never
// HTML, never sniffed, sandboxed, and over 8 MiB a download.
func (s *Server) sampleText(w http.ResponseWriter, r *http.Request, c store.Comparison) {
	p, rid, idx, err := s.sampleOf(r, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	text, err := s.st.SampleCompletion(r.Context(), rid, p.ID, idx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	disposition := "inline"
	if len(text) > 8<<20 {
		disposition = "attachment"
	}
	h.Set("Content-Disposition", fmt.Sprintf(`%s; filename="sample-%d-%s-%d.txt"`, disposition, rid, safeFilename(p.Key), idx))
	_, _ = io.WriteString(w, text)
}

// safeFilename keeps letters, digits, '-', '_' and '.' of s (a problem key
// such as "test/algebra/1.json"), at most 64 of them.
func safeFilename(s string) string {
	b := make([]byte, 0, min(len(s), 64))
	for i := 0; i < len(s) && len(b) < 64; i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' {
			b = append(b, c)
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
}

func (s *Server) sampleTextPage(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if ok {
		s.sampleText(w, r, c)
	}
}

// problemModels puts together each model's counts (store.ProblemCounts),
// first samples (store.ProblemSamplesInto) and uncounted solves
// (answerGroups') on a problem, in c.Runs order; the models at the places
// open names (openModels; nil: all) are open, their samples read.
func problemModels(c store.Comparison, counts map[int64]store.Count, samples map[int64][]store.Sample, uncounted map[int64]map[string]int, open []int64) []views.ProblemModel {
	var out []views.ProblemModel
	for i, run := range c.Runs {
		pm := views.ProblemModel{Run: run, Index: i, Uncounted: uncounted[run.ID], Open: open == nil || slices.Contains(open, int64(i)) || !run.HasTexts}
		if x, ok := counts[run.ID]; ok {
			pm.N, pm.C = x.N, x.C
		}
		if run.HasTexts {
			pm.Samples = samples[run.ID]
			pm.More = pm.N - len(pm.Samples)
		}
		out = append(out, pm)
	}
	return out
}

// neighbours finds a problem's region and the previous and next problems of
// the same region, in dataset order.
func neighbours(rows []analysis.ProblemRow, pid int64) (region string, prev, next int64) {
	at := -1
	for i, row := range rows {
		if row.ProblemID == pid {
			at, region = i, row.Region
		}
	}
	if at < 0 {
		return "", 0, 0
	}
	for i := at - 1; i >= 0; i-- {
		if rows[i].Region == region {
			prev = rows[i].ProblemID
			break
		}
	}
	for i := at + 1; i < len(rows); i++ {
		if rows[i].Region == region {
			next = rows[i].ProblemID
			break
		}
	}
	return region, prev, next
}

// problemPair is the pair a problem page is about, as an index into c.Runs
// (1 = the first other model): pairParam when c has that model, else 1.
func problemPair(r *http.Request, c store.Comparison) int {
	if p := pairParam(r); p < int64(len(c.Runs)) {
		return int(p)
	}
	return 1
}

// pairParam is the pair a problem page's URL names: ?pair=, else the pair
// of the table list the reviewer came from (?list=), else 1; at least 1,
// but maybe beyond the comparison's models (problemPair checks).
func pairParam(r *http.Request) int64 {
	q := r.URL.Query()
	v := q.Get("pair")
	if v == "" {
		if lq, err := url.ParseQuery(q.Get("list")); err == nil {
			v = lq.Get("pair")
		}
	}
	if p, err := strconv.ParseInt(v, 10, 64); err == nil && p >= 1 {
		return p
	}
	return 1
}

// pairRows are the report's rows with their regions against pair (a copy
// per report and pair, kept with the report: the rows are shared).
func pairRows(e *analysis.Entry, pair int) []analysis.ProblemRow {
	rep := e.Report
	if pair == 1 {
		return rep.Rows
	}
	rows, _ := e.Memo(fmt.Sprintf("rows-vs-%d", pair), func() (any, error) {
		out := make([]analysis.ProblemRow, len(rep.Rows))
		for i := range rep.Rows {
			out[i] = rep.Rows[i]
			out[i].Region = rowRegion(rep, pair, i)
		}
		return out, nil
	})
	return rows.([]analysis.ProblemRow)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + " …"
}

package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/auth"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// shareCharts are what a share link can show: "" is every chart.
var shareCharts = []string{"", "crossover", "venn", "histogram"}

// shareRequest is what a new share link is made of (form or API JSON).
type shareRequest struct {
	Label     string     `json:"label"`      // what the link is for, shown in the list; may be empty
	Chart     string     `json:"chart"`      // "", crossover, venn, histogram
	ShowTexts bool       `json:"show_texts"` // problem statements and completions visible
	ShowNotes bool       `json:"show_notes"` // the comparison's notes visible
	ExpiresIn string     `json:"expires_in"` // Go duration ("72h"); empty: no expiry
	ExpiresAt *time.Time `json:"expires_at"` // RFC 3339; not with ExpiresIn
	// View is the report view shown, as the comparison page's query
	// (exclude=guessable&estimator=biased&min_n=8&without=grading-errors);
	// empty: the default view.
	View string `json:"view"`
}

// shareView checks a share link's view (a query string of the comparison
// page's view options) and writes it in one order, keeping only what
// changes the figures; other keys are a form error.
func shareView(view string) (string, error) {
	q, err := url.ParseQuery(strings.TrimPrefix(view, "?"))
	if err != nil || len(view) > 200 {
		return "", badForm("view %q: want the comparison page's view options, such as exclude=guessable&estimator=biased", view)
	}
	out := url.Values{}
	for k := range q {
		v := q.Get(k)
		switch {
		case k == "exclude" && v == "guessable", k == "estimator" && v == "biased", k == "without" && v == "grading-errors":
			out.Set(k, v)
		case k == "min_n":
			if n, err := strconv.Atoi(v); err != nil || n < 2 || n > 10_000_000 {
				return "", badForm("view: min_n %q: want a whole number from 2 to 10000000", v)
			}
			out.Set(k, v)
		case k == "exclude" || k == "estimator" || k == "without":
			if v != "" {
				return "", badForm("view: %s=%q: want exclude=guessable, estimator=biased or without=grading-errors", k, v)
			}
		default:
			return "", badForm("view: %q is not a view option (exclude, estimator, min_n, without)", k)
		}
	}
	return out.Encode(), nil
}

// viewOf picks the view options out of a comparison page's query.
func viewOf(q url.Values) string {
	out := url.Values{}
	for _, k := range []string{"exclude", "estimator", "min_n", "without"} {
		if v := q.Get(k); v != "" {
			out.Set(k, v)
		}
	}
	v, err := shareView(out.Encode())
	if err != nil {
		return ""
	}
	return v
}

// link validates req into a share link made by userID (its comparison or
// collection still to set); a bad field is a form error.
func (req shareRequest) link(userID int64) (store.ShareLink, error) {
	l := store.ShareLink{Label: strings.TrimSpace(req.Label), Chart: req.Chart, ShowTexts: req.ShowTexts, ShowNotes: req.ShowNotes,
		CreatedBy: userID}
	if err := tooLong("Label", l.Label, maxName); err != nil {
		return l, err
	}
	view, err := shareView(req.View)
	if err != nil {
		return l, err
	}
	l.View = view
	if !slices.Contains(shareCharts, req.Chart) {
		return l, badForm("chart %q: choose crossover, venn, histogram or nothing (every chart)", req.Chart)
	}
	switch {
	case req.ExpiresAt != nil && req.ExpiresIn != "":
		return l, badForm("give expires_in or expires_at, not both")
	case req.ExpiresAt != nil:
		l.ExpiresAt = req.ExpiresAt
	case req.ExpiresIn != "":
		d, err := time.ParseDuration(req.ExpiresIn)
		if err != nil || d <= 0 {
			return l, badForm("expires_in %q: want a positive duration such as 72h", req.ExpiresIn)
		}
		t := time.Now().Add(d)
		l.ExpiresAt = &t
	}
	if l.ExpiresAt != nil && !l.ExpiresAt.After(time.Now()) {
		return l, badForm("the expiry %s is in the past", l.ExpiresAt.Format(time.RFC3339))
	}
	return l, nil
}

// shareFormRequest reads the browser's share form: label, chart,
// show_texts, show_notes, expires_days (empty for never).
func shareFormRequest(r *http.Request) (shareRequest, error) {
	req := shareRequest{Label: r.PostForm.Get("label"), Chart: r.PostForm.Get("chart"), ShowTexts: r.PostForm.Get("show_texts") == "on",
		ShowNotes: r.PostForm.Get("show_notes") == "on", View: r.PostForm.Get("view")}
	if d := r.PostForm.Get("expires_days"); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n <= 0 || n > 3650 {
			return req, badForm("Choose how many days the link lasts.")
		}
		req.ExpiresIn = (time.Duration(n) * 24 * time.Hour).String()
	}
	return req, nil
}

// saveShare stores l under a new token with its audit entry and returns
// its id and URL (the token appears only in that URL, never stored).
func (s *Server) saveShare(r *http.Request, l store.ShareLink) (int64, string, error) {
	token, hash, err := auth.NewToken(auth.PrefixShare)
	if err != nil {
		return 0, "", err
	}
	var id int64
	err = s.st.WithTx(r.Context(), func(tx *store.Store) error {
		if id, err = tx.CreateShare(r.Context(), l, hash); err != nil {
			return err
		}
		return tx.AddAudit(r.Context(), store.AuditEntry{UserID: l.CreatedBy, ComparisonID: l.ComparisonID, Action: "share",
			Target: shareTarget(l, id), New: views.ShareScope(l)})
	})
	if err != nil {
		return 0, "", err
	}
	return id, s.baseURL(r) + "/s/" + token, nil
}

// shareTarget names a share link in the audit log.
func shareTarget(l store.ShareLink, id int64) string {
	t := fmt.Sprintf("share link %d", id)
	if l.CollectionID != 0 {
		t = fmt.Sprintf("collection %d %s", l.CollectionID, t)
	}
	if l.Label != "" {
		t += " (" + l.Label + ")"
	}
	return t
}

// newShare validates req and creates a link to a comparison.
func (s *Server) newShare(r *http.Request, comparisonID int64, req shareRequest) (int64, string, error) {
	l, err := req.link(currentUser(r).ID)
	if err != nil {
		return 0, "", err
	}
	l.ComparisonID = comparisonID
	return s.saveShare(r, l)
}

func (s *Server) sharesPage(w http.ResponseWriter, r *http.Request) {
	s.renderShares(w, r, http.StatusOK, views.NewShare{Chart: r.URL.Query().Get("chart"), View: viewOf(r.URL.Query())})
}

func (s *Server) renderShares(w http.ResponseWriter, r *http.Request, status int, ns views.NewShare) {
	id, _ := idParam(r, "id")
	c, err := s.st.GetComparison(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ls, err := s.st.ListShares(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ns.URL != "" {
		w.Header().Set("Cache-Control", "no-store")
	}
	s.render(w, r, status, views.SharesPage(views.SharesView{C: c, Links: ls, New: ns, Now: time.Now()}))
}

// createShare is the browser's "Share" form (see shareFormRequest).
func (s *Server) createShare(w http.ResponseWriter, r *http.Request) {
	id, _ := idParam(r, "id")
	if !s.parseForm(w, r) {
		return
	}
	req, err := shareFormRequest(r)
	var sid int64
	var u string
	if err == nil {
		sid, u, err = s.newShare(r, id, req)
	}
	ns := views.NewShare{Label: req.Label, Chart: req.Chart, ShowTexts: req.ShowTexts, ShowNotes: req.ShowNotes, View: viewOf(r.PostForm)}
	var fe formError
	if errors.As(err, &fe) {
		ns.Error = fe.msg
		s.renderShares(w, r, http.StatusBadRequest, ns)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ns.ID, ns.URL = sid, u
	s.renderShares(w, r, http.StatusOK, ns)
}

// shareForOwner returns share {sid} if the user owns the project of its
// comparison or collection, with the status to answer otherwise: 404 for a
// link of something they cannot read, 403 for a role below owner.
func (s *Server) shareForOwner(r *http.Request) (store.ShareLink, int, error) {
	sid, err := idParam(r, "sid")
	if err != nil {
		return store.ShareLink{}, http.StatusNotFound, err
	}
	l, err := s.st.GetShare(r.Context(), sid)
	if err != nil {
		return l, http.StatusNotFound, err
	}
	u := currentUser(r)
	var member string
	if l.CollectionID != 0 {
		var k store.Collection
		if k, err = s.st.GetCollection(r.Context(), l.CollectionID); err == nil {
			member, err = s.st.RoleIn(r.Context(), k.ProjectID, u.ID)
		}
	} else {
		_, member, err = s.st.ComparisonRole(r.Context(), l.ComparisonID, u.ID)
	}
	if err != nil {
		return l, http.StatusNotFound, err
	}
	rl := role(u, member)
	if !rl.Allows(auth.Read) {
		return l, http.StatusNotFound, fmt.Errorf("share link %d: %w", sid, store.ErrNotFound)
	}
	if !rl.Allows(auth.Manage) {
		return l, http.StatusForbidden, errForbidden
	}
	return l, http.StatusOK, nil
}

// revokeShareFor revokes share {sid} (see shareForOwner for who may).
func (s *Server) revokeShareFor(r *http.Request) (store.ShareLink, int, error) {
	l, status, err := s.shareForOwner(r)
	if err != nil {
		return l, status, err
	}
	if err := s.st.RevokeShare(r.Context(), l.ID); err != nil {
		return l, http.StatusInternalServerError, err
	}
	err = s.st.AddAudit(r.Context(), store.AuditEntry{UserID: currentUser(r).ID, ComparisonID: l.ComparisonID, Action: "share-revoke",
		Target: shareTarget(l, l.ID), Old: views.ShareScope(l), New: "revoked"})
	return l, http.StatusOK, err
}

// sharesURL is the page listing l's siblings: its comparison's or its
// collection's share links.
func sharesURL(l store.ShareLink) string {
	if l.CollectionID != 0 {
		return fmt.Sprintf("/collections/%d/shares", l.CollectionID)
	}
	return fmt.Sprintf("/comparisons/%d/shares", l.ComparisonID)
}

func (s *Server) denyShare(w http.ResponseWriter, r *http.Request, status int, err error) {
	switch status {
	case http.StatusNotFound:
		s.deny(w, r, status, "There is no such share link.")
	case http.StatusForbidden:
		s.deny(w, r, status, "Only the project's owners can revoke share links.")
	default:
		s.fail(w, r, err)
	}
}

// revokeConfirm asks before a share link is revoked (GET
// /shares/{sid}/revoke): the list's Revoke button leads here, so revoking
// takes a second, deliberate click without any script.
func (s *Server) revokeConfirm(w http.ResponseWriter, r *http.Request) {
	l, status, err := s.shareForOwner(r)
	if err != nil {
		s.denyShare(w, r, status, err)
		return
	}
	v := views.RevokeView{L: l, Back: sharesURL(l), Now: time.Now()}
	if l.CollectionID != 0 {
		k, err := s.st.GetCollection(r.Context(), l.CollectionID)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		v.Of = "collection “" + k.Name + "”"
	} else {
		c, err := s.st.GetComparison(r.Context(), l.ComparisonID)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		v.Of = "comparison “" + c.Name + "”"
	}
	s.render(w, r, http.StatusOK, views.RevokeConfirm(v))
}

func (s *Server) revokeShare(w http.ResponseWriter, r *http.Request) {
	l, status, err := s.revokeShareFor(r)
	if err != nil {
		s.denyShare(w, r, status, err)
		return
	}
	http.Redirect(w, r, sharesURL(l), http.StatusSeeOther)
}

// apiCreateShare: POST /api/v1/comparisons/{id}/shares with an optional
// JSON body {"chart", "show_texts", "expires_in" | "expires_at"}; answers
// 201 {"id", "url"}.
func (s *Server) apiCreateShare(w http.ResponseWriter, r *http.Request) {
	id, _ := idParam(r, "id")
	var req shareRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	if err != nil {
		s.apiFail(w, r, badForm("reading the body: %v", err))
		return
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			s.apiFail(w, r, badForm("share request JSON: %v", err))
			return
		}
	}
	sid, u, err := s.newShare(r, id, req)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, apiShareCreated{sid, u})
}

// apiShareCreated answers POST /api/v1/comparisons/{id}/shares.
type apiShareCreated struct {
	ID  int64  `json:"id"`
	URL string `json:"url"`
}

// apiRevokeShare: DELETE /api/v1/shares/{id} answers 204.
func (s *Server) apiRevokeShare(w http.ResponseWriter, r *http.Request) {
	_, status, err := s.revokeShareFor(r)
	switch {
	case status == http.StatusNotFound:
		s.deny(w, r, status, "no such share link")
	case status == http.StatusForbidden:
		s.deny(w, r, status, "only the project's owners can revoke share links")
	case err != nil:
		s.apiFail(w, r, err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// openLink resolves /s/{token} to its live link; an unknown, revoked or
// expired one answers 404 (ok false). view counts one view.
func (s *Server) openLink(w http.ResponseWriter, r *http.Request, view bool) (store.ShareLink, bool) {
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Robots-Tag", "noindex, nofollow")
	if s.fixed != nil {
		return *s.fixed, true
	}
	l, err := s.st.OpenShare(r.Context(), auth.HashToken(chiParam(r, "token")), view)
	if errors.Is(err, store.ErrNotFound) {
		s.render(w, r, http.StatusNotFound, views.SharedGone())
		return l, false
	}
	if err != nil {
		s.fail(w, r, err)
		return l, false
	}
	return l, true
}

// What a live share link's 404s say (sharedMissing).
const (
	noTexts   = "This share link does not show problems and their completions; ask whoever sent it for one that does."
	noProblem = "The shared comparison has no such problem."
)

// sharedProblemOf is the problem of the request's {pid} when link l shows
// it; otherwise it answers 404 and ok is false. A link shows problems only
// if made with texts, to every chart or the Venn diagrams, and then only
// those its page lists: the base-only problems of each pair (the solved
// sets' information the Venn diagrams share). Any other problem id, found
// by counting up, would tell its solved set through its samples' verdicts.
// A bundle (an offline folder its owner made, s.fixed) lists and shows
// every problem.
func (s *Server) sharedProblemOf(w http.ResponseWriter, r *http.Request, l store.ShareLink, c store.Comparison, e *analysis.Entry) (store.Problem, bool) {
	if !l.ShowTexts {
		s.sharedMissing(w, r, noTexts)
		return store.Problem{}, false
	}
	if s.fixed == nil && l.Chart != "" && l.Chart != "venn" {
		s.sharedMissing(w, r, "This share link shares one chart, which lists no problems; ask whoever sent it for a link to every chart or the Venn diagrams with texts.")
		return store.Problem{}, false
	}
	p, err := s.problemOf(r, c)
	if errors.Is(err, store.ErrNotFound) {
		s.sharedMissing(w, r, noProblem)
		return p, false
	}
	if err != nil {
		s.fail(w, r, err)
		return p, false
	}
	if s.fixed == nil && !listedBaseOnly(e, p.ID) {
		s.sharedMissing(w, r, "This share link shows only the problems its page lists: those only the base model solved.")
		return p, false
	}
	return p, true
}

// listedBaseOnly reports whether problem pid is base-only against some
// model of e's report: listed on the shared page (sharedView).
func listedBaseOnly(e *analysis.Entry, pid int64) bool {
	for pair := 1; pair < len(e.Report.Models); pair++ {
		for _, row := range pairRows(e, pair) {
			if row.ProblemID == pid && row.Region == "base-only" {
				return true
			}
		}
	}
	return false
}

// sharedMissing answers 404 for something a live link does not show or
// its comparison does not have, saying that the link itself works.
func (s *Server) sharedMissing(w http.ResponseWriter, r *http.Request, what string) {
	s.render(w, r, http.StatusNotFound, views.SharedMissing(chiParam(r, "token"), what))
}

// sharedComparison is a comparison link's ready comparison and report.
// Anything else (a collection's link, a comparison gone or not ready)
// answers 404 or 503 and ok is false.
func (s *Server) sharedComparison(w http.ResponseWriter, r *http.Request, l store.ShareLink) (store.Comparison, *analysis.Entry, bool) {
	notFound := func() (store.Comparison, *analysis.Entry, bool) {
		s.render(w, r, http.StatusNotFound, views.SharedGone())
		return store.Comparison{}, nil, false
	}
	if l.ComparisonID == 0 {
		return notFound()
	}
	c, err := s.st.GetComparison(r.Context(), l.ComparisonID)
	if errors.Is(err, store.ErrNotFound) {
		return notFound()
	}
	if err != nil {
		s.fail(w, r, err)
		return c, nil, false
	}
	opt, err := s.shareOptions(r, l)
	if err != nil {
		s.fail(w, r, err)
		return c, nil, false
	}
	e, err := s.reports.Get(r.Context(), c.ID, opt)
	if errors.Is(err, analysis.ErrNotReady) {
		s.render(w, r, http.StatusServiceUnavailable, views.SharedNotReady())
		return c, nil, false
	}
	if err != nil {
		s.fail(w, r, err)
		return c, nil, false
	}
	return c, e, true
}

// shareOptions are the report options of the view link l shows.
func (s *Server) shareOptions(r *http.Request, l store.ShareLink) (analysis.Options, error) {
	q, err := url.ParseQuery(l.View)
	if err != nil {
		return analysis.Options{}, fmt.Errorf("share link %d: view %q: %w", l.ID, l.View, err)
	}
	return s.optionsFor(r.Context(), l.ComparisonID, q)
}

// openShare resolves /s/{token} of a comparison's link: the link, its
// ready comparison and report (see openLink and sharedComparison).
func (s *Server) openShare(w http.ResponseWriter, r *http.Request, view bool) (store.ShareLink, store.Comparison, *analysis.Entry, bool) {
	l, ok := s.openLink(w, r, view)
	if !ok {
		return l, store.Comparison{}, nil, false
	}
	c, e, ok := s.sharedComparison(w, r, l)
	return l, c, e, ok
}

// sharedView builds the shared page's charts (only those the link covers).
func (s *Server) sharedView(r *http.Request, l store.ShareLink, c store.Comparison, e *analysis.Entry) (views.SharedView, error) {
	rep := e.Report
	v := views.SharedView{L: l, C: c, R: rep, Token: chiParam(r, "token"), BaseURL: s.baseURL(r)}
	if s.fixed != nil {
		// A bundle's links stay within it: no address of this instance.
		v.BaseURL, v.Bundle = "", true
	}
	opt, err := s.shareOptions(r, l)
	if err != nil {
		return v, err
	}
	cs, err := memoCharts(e, c.ID, opt, 1, false)
	if err != nil {
		return v, err
	}
	cross, venns, vennPairs, hist := cs.crossover, cs.venns, cs.vennPairs, cs.histogram
	if l.Chart == "" || l.Chart == "crossover" {
		v.Crossover = cross
	}
	if l.Chart == "" || l.Chart == "venn" {
		v.Venns, v.VennPairs = venns, vennPairs
	}
	if l.Chart == "" || l.Chart == "histogram" {
		v.Histogram = hist
	}
	if l.ShowTexts && (l.Chart == "" || l.Chart == "venn") {
		// The base-only problems are the Venn diagrams' (solved sets): a
		// link to another chart does not list them. One list per pair: a
		// problem base-only against step 300 may be solved by both against
		// step 100.
		for pair := 1; pair < len(rep.Models); pair++ {
			sp := views.SharedPair{Other: rep.Models[pair].Name}
			for _, row := range pairRows(e, pair) {
				if row.Region == "base-only" {
					sp.BaseOnly = append(sp.BaseOnly, row)
				}
			}
			v.BaseOnly = append(v.BaseOnly, sp)
		}
	}
	return v, nil
}

// sharedPage is /s/{token}: a comparison's charts and figures, or a
// collection's overlay and table.
func (s *Server) sharedPage(w http.ResponseWriter, r *http.Request) {
	l, ok := s.openLink(w, r, true)
	if !ok {
		return
	}
	if l.CollectionID != 0 {
		s.sharedCollection(w, r, l)
		return
	}
	c, e, ok := s.sharedComparison(w, r, l)
	if !ok {
		return
	}
	v, err := s.sharedView(r, l, c, e)
	if err == nil && l.ShowNotes {
		v.Notes, err = s.noteHTML(r.Context(), c.ID)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// The intervals the owner's page shows: computed once, for both.
	if e.Report.Stats.Status == analysis.StatsPending && s.jobs != nil {
		if err := jobs.StartStats(r.Context(), s.jobs, c.ID); err != nil {
			s.log.Warn("enqueue statistics", "comparison", c.ID, "err", err)
		}
	}
	s.render(w, r, http.StatusOK, views.SharedPage(v))
}

// sharedEmbed is the iframe view: the link's chart only, framable from
// any site.
func (s *Server) sharedEmbed(w http.ResponseWriter, r *http.Request) {
	l, c, e, ok := s.openShare(w, r, true)
	if !ok {
		return
	}
	v, err := s.sharedView(r, l, c, e)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Del("X-Frame-Options")
	w.Header().Set("Content-Security-Policy", "frame-ancestors *")
	s.render(w, r, http.StatusOK, views.SharedEmbed(v))
}

func (s *Server) sharedProblem(w http.ResponseWriter, r *http.Request) {
	l, c, e, ok := s.openShare(w, r, false)
	if !ok {
		return
	}
	p, ok := s.sharedProblemOf(w, r, l, c, e)
	if !ok {
		return
	}
	v := views.ProblemView{C: c, P: p, Shared: chiParam(r, "token")}
	limit := samplesShown
	// Of more than two models the first pair's samples show, the others'
	// when opened; a bundle (an offline folder: nothing to load) shows all.
	open := openModels(r, 1)
	if s.bundleSamples > 0 {
		limit, open = s.bundleSamples, nil
	}
	var (
		answers []store.AnswerCount
		counts  map[int64]store.Count
		samples map[int64][]store.Sample
	)
	if err := s.st.Batch(r.Context(), s.st.AnswerCountsInto(c.ID, p.ID, &answers), s.st.ProblemCountsInto(c.ID, p.ID, &counts),
		s.st.ProblemSamplesInto(store.ProblemRunsShown(c, open), p.ID, limit, nil, &samples)); err != nil {
		s.fail(w, r, err)
		return
	}
	redactShared(samples, l)
	v.Models = problemModels(c, counts, samples, uncountedOf(c, answers), open)
	for _, row := range e.Report.Rows {
		if row.ProblemID == p.ID {
			v.Region = row.Region
		}
	}
	s.render(w, r, http.StatusOK, views.SharedProblem(v))
}

// sharedModelSamples is one model's samples on a shared problem page
// ({model}: its place among the runs), the fragment its closed section
// loads: as the link allows.
func (s *Server) sharedModelSamples(w http.ResponseWriter, r *http.Request) {
	l, c, e, ok := s.openShare(w, r, false)
	if !ok {
		return
	}
	model, err := strconv.Atoi(chiParam(r, "model"))
	if l.ShowTexts && (err != nil || model < 0 || model >= len(c.Runs)) {
		s.sharedMissing(w, r, "The shared comparison has no such model.")
		return
	}
	p, ok := s.sharedProblemOf(w, r, l, c, e)
	if !ok {
		return
	}
	v := views.ProblemView{C: c, P: p, Shared: chiParam(r, "token")}
	open := []int64{int64(model)}
	var (
		counts  map[int64]store.Count
		samples map[int64][]store.Sample
	)
	if err := s.st.Batch(r.Context(), s.st.ProblemCountsInto(c.ID, p.ID, &counts),
		s.st.ProblemSamplesInto(store.ProblemRunsShown(c, open), p.ID, samplesShown, nil, &samples)); err != nil {
		s.fail(w, r, err)
		return
	}
	redactShared(samples, l)
	v.Models = problemModels(c, counts, samples, nil, open)
	s.render(w, r, http.StatusOK, views.ModelSamples(v, v.Models[model]))
}

// sharedSampleText is a whole completion through a share link that shows
// texts.
func (s *Server) sharedSampleText(w http.ResponseWriter, r *http.Request) {
	l, c, e, ok := s.openShare(w, r, false)
	if !ok {
		return
	}
	if _, ok := s.sharedProblemOf(w, r, l, c, e); !ok {
		return
	}
	s.sampleText(w, r, c)
}

func (s *Server) sharedChartData(w http.ResponseWriter, r *http.Request) {
	l, _, e, ok := s.openShare(w, r, false)
	if !ok {
		return
	}
	name, _, _ := strings.Cut(chiParam(r, "chart"), ".")
	// Only the charts the page shows: the link's one chart, or crossover, Venns and histogram.
	// The debate figures are not on shared pages: their data is not shared either.
	if (l.Chart != "" && !strings.HasPrefix(name, l.Chart)) || name == "diff" || name == "cover" || isDebateChart(name) {
		s.sharedMissing(w, r, "This share link does not share that chart's data.")
		return
	}
	if err := writeChartData(w, r, e, chiParam(r, "chart")); errors.Is(err, store.ErrNotFound) {
		s.sharedMissing(w, r, "The shared comparison has no such chart.")
	} else if err != nil {
		s.fail(w, r, err)
	}
}

// redactShared keeps on a shared problem page only what the link names: an
// override's note only with "notes", and never who overrode (no account's
// email is on a /s/ page). That a verdict was overridden, and from what,
// stays: the figures count the overridden verdict.
func redactShared(samples map[int64][]store.Sample, l store.ShareLink) {
	for _, ss := range samples {
		for i := range ss {
			if o := ss[i].Override; o != nil {
				x := *o
				x.By = ""
				if !l.ShowNotes {
					x.Note = ""
				}
				ss[i].Override = &x
			}
		}
	}
}

// Package web is Reach's HTTP layer: the chi router, thin handlers and the
// templ views in web/views. Handlers read from the store and analysis, and
// enqueue River jobs; they hold no SQL and no statistics.
package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
	"github.com/klauspost/compress/gzip"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/auth"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/metrics"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/sso"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
	vmath "github.com/reach-lab/reach/internal/verify/math"
	"github.com/reach-lab/reach/static"
	"github.com/reach-lab/reach/web/views"
)

// Config configures the web server.
type Config struct {
	// MaxUploadBytes caps each uploaded file (default 2 GiB).
	MaxUploadBytes int64
	// JobsUI, when set, is mounted at /riverui/ (River's job dashboard), for admins only.
	JobsUI http.Handler
	// Secret seals the API keys of endpoints entered in the browser.
	Secret *secret.Box
	// BaseURL is the instance's public address for share and invitation
	// links ("https://reach.example.org"); empty means the request's host.
	BaseURL string
	// Verifier is the verifier re-verification uses (to tell whether it
	// applies to a comparison's problems); nil means the math verifier.
	Verifier verify.Verifier
	// TrustProxyHeaders takes the client address from X-Forwarded-For /
	// X-Real-IP (only behind a reverse proxy that sets them): it is what
	// sign-in rate limiting counts per address.
	TrustProxyHeaders bool
	// CodeGrading is why this server cannot run code in its sandbox (nil
	// when it can): pages of code comparisons say so, and Re-verify of one
	// is refused rather than leaving its samples not graded.
	CodeGrading error
	// FollowEvery is how often a comparison following a server folder looks
	// at it (0: follow.DefaultEvery).
	FollowEvery time.Duration
	// SSO, when set, offers single sign-on with an OpenID provider
	// (/login/oidc); nil: the routes answer 404 and the sign-in page has
	// no SSO button.
	SSO *sso.Client
	// ReportCacheBytes bounds the memory of the reports kept decoded (0:
	// analysis.DefaultCacheBytes).
	ReportCacheBytes int64
}

// Server holds what handlers need.
type Server struct {
	st      *store.Store
	jobs    *jobs.Client
	cfg     Config
	log     *slog.Logger
	reports *analysis.Cache // reports computed once per change

	login *loginLimits

	// fixed, on a bundle's server (BundleHandler), is the one share link
	// every /s/ URL opens; bundleSamples caps its problem pages' samples.
	fixed         *store.ShareLink
	bundleSamples int
}

// New returns the HTTP handler of the whole application.
//
// Access: /healthz, /static/, the API's OpenAPI document
// (/api/v1/openapi.json), sign-in (password, and single sign-on at
// /login/oidc when cfg.SSO is set), the first-run page (localhost, no
// accounts yet), invitations and share links (/s/{token}) are public;
// everything else needs a signed-in user (session cookie) or, under
// /api/v1/, an API token (Authorization: Bearer). Comparisons are read by
// their project's viewers, changed by its editors and shared or deleted by
// its owners; admins may do everything. Every state-changing request must
// be same-origin (CSRF), except API requests with a Bearer token.
func New(st *store.Store, jc *jobs.Client, cfg Config, log *slog.Logger) http.Handler {
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = 2 << 30
	}
	if cfg.Verifier == nil {
		cfg.Verifier = vmath.New()
	}
	ll, err := newLoginLimits()
	if err != nil {
		panic(err) // crypto/rand failed: nothing can work
	}
	s := &Server{st: st, jobs: jc, cfg: cfg, log: log, login: ll, reports: analysis.NewCache(st, 0)}
	s.reports.SetMaxBytes(cfg.ReportCacheBytes)
	r := chi.NewRouter()
	// First, so its time and status include everything after it.
	r.Use(metrics.Middleware)
	r.Use(keepPeer)
	if cfg.TrustProxyHeaders {
		r.Use(middleware.RealIP)
	}
	r.Use(requestID, limitBodies, s.logRequests, middleware.Recoverer, compress(), securityHeaders, s.csrf, s.identify)

	r.Get("/healthz", s.healthz)
	// The API's description is public, like the source it is part of: API
	// clients and code generators read it before they hold a token.
	r.Get(openAPIPath, openAPI)
	r.Handle("/static/*", http.StripPrefix("/static/", staticHandler()))
	// Browsers ask for /favicon.ico by themselves (a 404 in every console).
	r.Get("/favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/static/favicon.svg", http.StatusMovedPermanently)
	})

	// Public: signing in, first run, invitations, share links.
	r.Get("/login", s.loginPage)
	r.Post("/login", s.signIn)
	r.Post("/logout", s.logout)
	r.Get("/login/oidc", s.ssoStart)
	r.Get("/login/oidc/callback", s.ssoCallback)
	r.Get("/setup", s.setupPage)
	r.Post("/setup", s.setup)
	r.Get("/invite/{token}", s.invitePage)
	r.Post("/invite/{token}", s.acceptInvite)
	r.Route("/s/{token}", func(r chi.Router) {
		// HEAD is answered like GET: link checkers and embedding sites ask
		// HEAD first (in the subrouter: chi's look-ahead does not see into it).
		r.Use(middleware.GetHead)
		r.Get("/", s.sharedPage)
		r.Get("/embed", s.sharedEmbed)
		r.Get("/problems/{pid}", s.sharedProblem)
		r.Get("/problems/{pid}/models/{model}/samples", s.sharedModelSamples)
		r.Get("/runs/{rid}/problems/{pid}/samples/{idx}/text", s.sharedSampleText)
		r.Get("/data/{chart}", s.sharedChartData)
	})

	r.Group(func(r chi.Router) {
		r.Use(s.signedIn)
		if cfg.JobsUI != nil {
			r.With(s.adminOnly).Handle("/riverui", http.RedirectHandler("/riverui/", http.StatusMovedPermanently))
			r.With(s.adminOnly, jobsUIPolicy).Mount("/riverui/", cfg.JobsUI)
		}
		r.Get("/", s.home)
		r.Get("/account/password", s.accountPage)
		r.Post("/account/password", s.changePassword)
		r.Get("/account/tokens", s.tokensPage)
		r.Post("/account/tokens", s.createToken)
		r.Post("/account/tokens/{tid}/revoke", s.revokeToken)
		r.With(s.adminOnly).Get("/admin/users", s.usersPage)
		r.With(s.adminOnly).Post("/admin/invites", s.createInvite)
		r.With(s.adminOnly).Post("/admin/users/{uid}/project-creator", s.setProjectCreator)
		r.With(s.adminOnly).Get("/admin/users/{uid}/disable", s.disableConfirm)
		r.With(s.adminOnly).Post("/admin/users/{uid}/disable", s.setDisabled(true))
		r.With(s.adminOnly).Post("/admin/users/{uid}/enable", s.setDisabled(false))
		r.With(s.adminOnly).Get("/admin/users/{uid}/reset-password", s.resetConfirm)
		r.With(s.adminOnly).Post("/admin/users/{uid}/reset-password", s.resetPassword)
		r.With(s.adminOnly).Get("/admin/invites/{iid}/revoke", s.revokeInviteConfirm)
		r.With(s.adminOnly).Post("/admin/invites/{iid}/revoke", s.revokeInvite)
		r.With(s.adminOnly).Get("/admin/network", s.networkPage)
		r.With(s.adminOnly).Post("/admin/network", s.setNetwork)
		r.With(s.adminOnly).Get("/admin/folders", s.foldersPage)
		r.With(s.adminOnly).Post("/admin/folders", s.setFolders)
		r.Get("/projects", s.projectsPage)
		r.Post("/projects", s.createProject)
		r.Route("/projects/{pid}", func(r chi.Router) {
			r.With(s.needProject(auth.Read)).Get("/", s.projectPage)
			r.With(s.needProject(auth.Manage)).Post("/members", s.setMember)
			r.With(s.needProject(auth.Manage)).Post("/members/{uid}/remove", s.removeMember)
		})
		r.Get("/shares/{sid}/revoke", s.revokeConfirm)
		r.Post("/shares/{sid}/revoke", s.revokeShare)
		r.Get("/collections", s.collectionsPage)
		r.With(s.canCreate).Post("/collections", s.createCollection)
		r.Route("/collections/{id}", func(r chi.Router) {
			r.With(s.needCollection(auth.Read)).Get("/", s.collectionPage)
			r.With(s.needCollection(auth.Edit)).Post("/add", s.collectionEdit(true))
			r.With(s.needCollection(auth.Edit)).Post("/remove", s.collectionEdit(false))
			r.With(s.needCollection(auth.Edit)).Post("/move", s.moveInCollection)
			r.With(s.needCollection(auth.Edit)).Post("/rename", s.renameCollection)
			r.With(s.needCollection(auth.Edit)).Get("/delete", s.deleteCollectionConfirm)
			r.With(s.needCollection(auth.Edit)).Post("/delete", s.deleteCollection)
			r.With(s.needCollection(auth.Manage)).Get("/shares", s.collectionSharesPage)
			r.With(s.needCollection(auth.Manage)).Post("/shares", s.createCollectionShare)
		})

		r.With(s.canCreate).Get("/comparisons/new", s.newComparison)
		r.With(s.canCreate).Post("/comparisons", s.createComparison)
		r.With(s.canCreate).Get("/comparisons/sample", s.newSampling)
		r.With(s.canCreate).Post("/comparisons/sample", s.createSampling)
		r.Route("/comparisons/{id}", func(r chi.Router) {
			read, edit, manage := r.With(s.needComparison(auth.Read)), r.With(s.needComparison(auth.Edit)), r.With(s.needComparison(auth.Manage))
			read.Get("/", s.comparison)
			read.Get("/progress", s.progress)
			read.Get("/mapping", s.mapping)
			read.Get("/problems/{pid}", s.problem)
			read.Get("/problems/{pid}/models/{model}/samples", s.problemModelSamples)
			read.Get("/runs/{rid}/problems/{pid}/samples/{idx}/text", s.sampleTextPage)
			read.Get("/runs/{rid}/problems/{pid}/samples/{idx}/tokens", s.tokenView)
			read.Get("/runs/{rid}/problems/{pid}/samples/{idx}/tokens.json", s.tokenJSON)
			read.Get("/tokens", s.tokenAggregates)
			read.Get("/audit", s.auditPage)
			read.Get("/data/{chart}", s.chartData)
			read.Get("/charts/{file}", s.chartsJS)
			read.Get("/samples.{format}", s.exportSamples)
			read.Get("/difficulty.{format}", s.exportDifficulty)
			edit.Post("/mapping", s.confirmMapping)
			edit.Get("/reverify", s.reverifyConfirm)
			for _, a := range []string{"reverify", "restore-verdicts", "policy", "retry", "cancel-import"} {
				edit.Post("/"+a, s.gradingAction(a))
			}
			edit.Post("/runs/{rid}/test", s.testConnection)
			for _, a := range []string{"start", "pause", "resume", "cancel", "extend"} {
				edit.Post("/"+a, s.samplingAction(a))
			}
			read.Get("/debate", s.debateFragment)
			edit.Post("/debate/{purpose}", s.debateSave)
			edit.Post("/debate/{purpose}/test", s.debateTest)
			for _, a := range []string{"start", "pause"} {
				edit.Post("/debate/{purpose}/"+a, s.debateAction(a))
			}
			read.Get("/verifier-audit", s.verifierAuditPage)
			edit.Post("/verifier-audit/start", s.verifierAuditAction("start"))
			edit.Post("/verifier-audit/pause", s.verifierAuditAction("pause"))
			edit.Post("/verifier-audit/runs/{rid}/problems/{pid}/samples/{idx}", s.resolveAuditItem)
			edit.Post("/problems/{pid}/review", s.review)
			edit.Post("/problems/{pid}/tokens", s.problemTokens)
			edit.Post("/runs/{rid}/problems/{pid}/samples/{idx}/verdict", s.overrideSample)
			edit.Post("/runs/{rid}/problems/{pid}/samples/{idx}/reasoning", s.reasoningLabel)
			edit.Get("/follow", s.followPage)
			edit.Post("/follow", s.startFollow)
			edit.Post("/follow/stop", s.stopFollow)
			edit.Get("/notes", s.notesPage)
			edit.Post("/notes", s.saveNotes)
			manage.Get("/delete", s.deleteConfirm)
			manage.Post("/delete", s.deleteComparison)
			manage.Get("/shares", s.sharesPage)
			manage.Post("/shares", s.createShare)
			manage.Get("/bundle", s.bundlePage)
			manage.Get("/bundle.zip", s.bundleZip)
		})
		r.Route("/api/v1", func(r chi.Router) {
			r.Get("/comparisons", s.apiComparisons)
			r.With(s.canCreate).Post("/comparisons", s.apiCreateComparison)
			r.With(s.needComparison(auth.Read)).Get("/comparisons/{id}", s.apiComparison)
			r.With(s.needComparison(auth.Manage)).Delete("/comparisons/{id}", s.deleteComparison)
			r.With(s.needComparison(auth.Read)).Get("/comparisons/{id}/report", s.apiReport)
			r.With(s.needComparison(auth.Read)).Get("/comparisons/{id}/reviews", s.apiReviews)
			r.With(s.needComparison(auth.Read)).Get("/comparisons/{id}/mapping", s.apiGetMapping)
			r.With(s.needComparison(auth.Read)).Get("/comparisons/{id}/samples.{format}", s.exportSamples)
			r.With(s.needComparison(auth.Read)).Get("/comparisons/{id}/difficulty.{format}", s.exportDifficulty)
			r.With(s.needComparison(auth.Read)).Get("/comparisons/{id}/data/{chart}", s.chartData)
			r.With(s.needComparison(auth.Edit)).Post("/comparisons/{id}/mapping", s.apiConfirmMapping)
			r.With(s.needComparison(auth.Manage)).Post("/comparisons/{id}/shares", s.apiCreateShare)
			for _, a := range []string{"reverify", "restore-verdicts", "policy", "retry", "cancel-import"} {
				r.With(s.needComparison(auth.Edit)).Post("/comparisons/{id}/"+a, s.gradingAction(a))
			}
			r.With(s.needComparison(auth.Read)).Get("/comparisons/{id}/debate", s.debateFragment)
			r.With(s.needComparison(auth.Read)).Get("/comparisons/{id}/verifier-audit", s.apiVerifierAuditGet)
			r.With(s.needComparison(auth.Edit)).Post("/comparisons/{id}/debate/{purpose}", s.debateSave)
			r.With(s.needComparison(auth.Edit)).Post("/comparisons/{id}/debate/{purpose}/test", s.debateTest)
			for _, a := range []string{"start", "pause"} {
				r.With(s.needComparison(auth.Edit)).Post("/comparisons/{id}/debate/{purpose}/"+a, s.debateAction(a))
			}
			r.Delete("/shares/{sid}", s.apiRevokeShare)
		})
	})
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.deny(w, r, http.StatusNotFound, "There is nothing at "+r.URL.Path+".")
	})
	return r
}

// filesOnly hides an FS's directories, so the file server answers 404
// instead of listing them.
type filesOnly struct{ fs.FS }

func (f filesOnly) Open(name string) (fs.File, error) {
	file, err := f.FS.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err := file.Stat(); err != nil || st.IsDir() {
		file.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return file, nil
}

func staticHandler() http.Handler {
	fs := http.FileServerFS(filesOnly{static.FS})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fs.ServeHTTP(w, r)
	})
}

// compress gzips text responses for clients that accept it (pages are
// a hundred KB or more of HTML), with klauspost/compress's gzip at its
// fastest level: measured on the comparison page at 12,500 problems, 6.4
// instead of 8.1 ms of CPU per page than level 5, for 14% more bytes.
// Responses that carry their own Content-Encoding (downloads compressed
// once per report, see body) pass through.
func compress() func(http.Handler) http.Handler {
	c := middleware.NewCompressor(1, "text/html", "text/css", "text/plain", "text/csv", "text/javascript",
		"application/javascript", "application/json", "application/vnd.oai.openapi+json", "image/svg+xml")
	c.SetEncoder("gzip", func(w io.Writer, level int) io.Writer {
		gw, err := gzip.NewWriterLevel(w, level)
		if err != nil {
			return nil
		}
		return gw
	})
	return c.Handler
}

// securityHeaders keeps pages from being framed and stops content sniffing;
// render adds the Content-Security-Policy to every page.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "SAMEORIGIN")
		next.ServeHTTP(w, r)
	})
}

// jobsUICSP is River UI's Content-Security-Policy: its prebuilt frontend
// loads only its own scripts, styles and API from this origin (its config
// is a JSON data block, not a script); React sets inline styles.
const jobsUICSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'"

func jobsUIPolicy(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", jobsUICSP)
		next.ServeHTTP(w, r)
	})
}

func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		if r.URL.Path == "/healthz" || len(r.URL.Path) > 7 && r.URL.Path[:8] == "/static/" {
			return
		}
		s.log.Info("http", "request_id", middleware.GetReqID(r.Context()), "method", r.Method, "path", r.URL.Path, "status", ww.Status(),
			"bytes", ww.BytesWritten(), "duration", time.Since(start).Round(time.Microsecond))
	})
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.st.Pool().Ping(ctx); err != nil {
		s.log.Error("health check", "request_id", middleware.GetReqID(r.Context()), "err", err)
		http.Error(w, "database unreachable (the server log has the cause)", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// cspPolicy admits scripts from Reach's own origin and, inline, only the
// chart scripts of this response (by nonce). Model text is escaped by templ
// anyway; the policy is the second line of defence. Inline styles stay
// allowed: ECharts, KaTeX and htmx set them.
const cspPolicy = "default-src 'self'; script-src 'self' 'nonce-%s'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
	"form-action 'self'; frame-ancestors %s"

// chartScript is how every chart snippet's inline script starts
// (internal/charts); render gives exactly these scripts the nonce.
var chartScript = []byte("<script>\n{")

// render writes a page with a fresh script nonce in its CSP. A handler that
// set a CSP with "frame-ancestors *" (the share embed) keeps that framing.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	s.renderPage(w, r, status, c, 0)
}

// renderPage is render; with chartsOf (a comparison id) the page's chart
// scripts go out as one script file of that comparison instead (chartFile).
func (s *Server) renderPage(w http.ResponseWriter, r *http.Request, status int, c templ.Component, chartsOf int64) {
	buf := renderBufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 4<<20 { // an outsized page's buffer is left to the GC
			renderBufs.Put(buf)
		}
	}()
	if err := c.Render(r.Context(), buf); err != nil {
		http.Error(w, s.internal(r, fmt.Errorf("render: %w", err)), http.StatusInternalServerError)
		return
	}
	page := buf.Bytes()
	var spans [][2]int
	var fileTag []byte
	fileAt := -1 // where the chart file's tag goes
	if chartsOf != 0 {
		// The chart file is deferred, just before app.js (which adds the
		// charts' image buttons once they are drawn), so it never holds up
		// reading the page; without app.js it goes where the last chart
		// script was and runs there.
		if spans = chartSpans(page); len(spans) > 0 {
			src := html.EscapeString(chartFileURL(chartsOf, chartFileFor(chartsOf, page, spans), r.URL.RawQuery))
			if fileAt = bytes.Index(page, appScript); fileAt >= 0 && fileAt < spans[0][0] {
				fileTag = []byte(`<script src="` + src + `" defer></script>`)
			} else {
				fileAt, fileTag = spans[len(spans)-1][0], []byte(`<script src="`+src+`"></script>`)
			}
		}
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	nonce := base64.RawStdEncoding.EncodeToString(b)
	frame := "'self'"
	if strings.Contains(w.Header().Get("Content-Security-Policy"), "frame-ancestors *") {
		frame = "*"
	}
	w.Header().Set("Content-Security-Policy", fmt.Sprintf(cspPolicy, nonce, frame))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	// The page goes out in pieces: no second copy of a page of a few
	// hundred KB. Chart scripts cut out for the chart file are left out;
	// any other chart script gets the nonce.
	tag := []byte(`<script nonce="` + nonce + `">` + "\n{")
	write := func(part []byte) bool {
		for {
			i := bytes.Index(part, chartScript)
			if i < 0 {
				break
			}
			if _, err := w.Write(part[:i]); err != nil {
				return false
			}
			if _, err := w.Write(tag); err != nil {
				return false
			}
			part = part[i+len(chartScript):]
		}
		_, err := w.Write(part)
		return err == nil
	}
	at := 0
	for _, sp := range spans {
		if fileAt >= at && fileAt <= sp[0] {
			if !write(page[at:fileAt]) {
				return
			}
			if _, err := w.Write(fileTag); err != nil {
				return
			}
			at = fileAt
		}
		if !write(page[at:sp[0]]) {
			return
		}
		at = sp[1]
	}
	write(page[at:])
}

// appScript is the layout's tag of app.js, before which a page's chart
// file goes.
var appScript = []byte(`<script src="/static/app.js" defer></script>`)

// renderBufs keeps render's page buffers between requests.
var renderBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// fail renders an error page; not-found errors become 404. Any other
// error is logged with the request id and the page shows only that id:
// database errors name the user, database, host and port. Under /api/ it
// answers JSON (apiFail), as the API's OpenAPI document says every error
// there is, also from handlers shared with the pages.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if isAPI(r) {
		s.apiFail(w, r, err)
		return
	}
	if errors.Is(err, store.ErrNotFound) {
		s.render(w, r, http.StatusNotFound, views.ErrorPage(404, "Not found", err.Error()))
		return
	}
	var fe formError
	if errors.As(err, &fe) { // a query parameter the page cannot show: say which
		s.render(w, r, http.StatusBadRequest, views.ErrorPage(400, "Bad request", fe.msg))
		return
	}
	if errors.Is(err, analysis.ErrNoData) { // a ready comparison without figures: say why
		s.render(w, r, http.StatusConflict, views.ErrorPage(409, "No figures to show", err.Error()))
		return
	}
	if errors.Is(err, analysis.ErrNotReady) { // its jobs run again (a new step, a re-grade): not a server fault
		s.render(w, r, http.StatusConflict, views.ErrorPage(409, "Not ready", err.Error()+": its jobs are running; the comparison page shows their progress."))
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	s.render(w, r, http.StatusInternalServerError, views.ErrorPage(500, "Something went wrong", s.internal(r, err)))
}

// internal logs err with the request's id and returns the message to show
// instead of it.
func (s *Server) internal(r *http.Request, err error) string {
	id := middleware.GetReqID(r.Context())
	s.log.Error("request failed", "request_id", id, "method", r.Method, "path", r.URL.Path, "err", err)
	return fmt.Sprintf("The server could not complete this request. The administrator can find the cause in the server log under request id %s.", id)
}

// requestID gives every request a random id (a client's X-Request-Id is
// not trusted), kept where chi's middleware.GetReqID finds it and sent back
// as X-Request-Id: the key to the request's lines in the server log.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		id := hex.EncodeToString(b)
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), middleware.RequestIDKey, id)))
	})
}

// fromDatabase reports whether err came from Postgres or the connection to
// it, rather than from checking what the user sent: such errors are logged,
// never shown.
func fromDatabase(err error) bool {
	var pgErr *pgconn.PgError
	var connErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &pgErr) || errors.As(err, &connErr) || errors.As(err, &netErr) ||
		errors.Is(err, puddle.ErrClosedPool) || errors.Is(err, pgx.ErrTxClosed)
}

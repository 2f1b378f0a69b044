// Package web is Reach's HTTP layer: the chi router, thin handlers and the
// templ views in web/views. Handlers read from the store and analysis, and
// enqueue River jobs; they hold no SQL and no statistics.
package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/static"
	"github.com/reach-lab/reach/web/views"
)

// Config configures the web server.
type Config struct {
	// MaxUploadBytes caps each uploaded file (default 2 GiB).
	MaxUploadBytes int64
	// JobsUI, when set, is mounted at /riverui/ (River's job dashboard).
	JobsUI http.Handler
	// Secret seals the API keys of endpoints entered in the browser.
	Secret *secret.Box
}

// Server holds what handlers need.
type Server struct {
	st   *store.Store
	jobs *jobs.Client
	cfg  Config
	log  *slog.Logger
}

// New returns the HTTP handler of the whole application.
func New(st *store.Store, jc *jobs.Client, cfg Config, log *slog.Logger) http.Handler {
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = 2 << 30
	}
	s := &Server{st: st, jobs: jc, cfg: cfg, log: log}
	r := chi.NewRouter()
	r.Use(middleware.RealIP, middleware.RequestID, s.logRequests, middleware.Recoverer, securityHeaders)

	r.Get("/healthz", s.healthz)
	r.Handle("/static/*", http.StripPrefix("/static/", staticHandler()))
	if cfg.JobsUI != nil {
		r.Handle("/riverui", http.RedirectHandler("/riverui/", http.StatusMovedPermanently))
		r.Mount("/riverui/", cfg.JobsUI)
	}

	r.Get("/", s.home)
	r.Get("/comparisons/new", s.newComparison)
	r.Post("/comparisons", s.createComparison)
	r.Get("/comparisons/sample", s.newSampling)
	r.Post("/comparisons/sample", s.createSampling)
	r.Route("/comparisons/{id}", func(r chi.Router) {
		r.Get("/", s.comparison)
		r.Get("/progress", s.progress)
		r.Get("/mapping", s.mapping)
		r.Post("/mapping", s.confirmMapping)
		r.Post("/reverify", s.reverify)
		r.Post("/delete", s.deleteComparison)
		r.Get("/problems/{pid}", s.problem)
		r.Post("/runs/{rid}/test", s.testConnection)
		for _, a := range []string{"start", "pause", "resume", "cancel", "extend"} {
			r.Post("/"+a, s.samplingAction(a))
		}
	})
	r.Route("/api/v1", func(r chi.Router) {
		r.Get("/comparisons", s.apiComparisons)
		r.Post("/comparisons", s.apiCreateComparison)
		r.Get("/comparisons/{id}", s.apiComparison)
		r.Get("/comparisons/{id}/report", s.apiReport)
	})
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.render(w, r, http.StatusNotFound, views.ErrorPage(404, "Not found", "There is nothing at "+r.URL.Path+"."))
	})
	return r
}

func staticHandler() http.Handler {
	fs := http.FileServerFS(static.FS)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fs.ServeHTTP(w, r)
	})
}

// securityHeaders keeps pages from being framed and stops content sniffing;
// model text is escaped by templ, and the CSP forbids inline event handlers
// from anything but our own scripts.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "SAMEORIGIN")
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
		s.log.Info("http", "method", r.Method, "path", r.URL.Path, "status", ww.Status(),
			"bytes", ww.BytesWritten(), "duration", time.Since(start).Round(time.Microsecond))
	})
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.st.Pool().Ping(ctx); err != nil {
		http.Error(w, "database unreachable: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := c.Render(r.Context(), w); err != nil {
		s.log.Error("render", "path", r.URL.Path, "err", err)
	}
}

// fail renders an error page; not-found errors become 404.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrNotFound) {
		s.render(w, r, http.StatusNotFound, views.ErrorPage(404, "Not found", err.Error()))
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	s.log.Error("request failed", "path", r.URL.Path, "err", err)
	s.render(w, r, http.StatusInternalServerError, views.ErrorPage(500, "Something went wrong", err.Error()))
}

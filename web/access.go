package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/reach-lab/reach/internal/auth"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// Sessions: the cookie holds a random token, Postgres its SHA-256. A session
// ends after sessionIdle without a request, and sessionMax after sign-in.
const (
	sessionCookie = "reach_session"
	sessionIdle   = 7 * 24 * time.Hour
	sessionMax    = 30 * 24 * time.Hour
)

type ctxKey int

const (
	principalKey ctxKey = iota
	roleKey
	peerKey
)

// principal is who made a request: a signed-in user (by session cookie or,
// under /api/, by Bearer API token) or nobody.
type principal struct {
	user        *store.User
	sessionHash []byte // set for cookie sessions
	viaToken    bool
}

func principalOf(r *http.Request) *principal {
	if p, ok := r.Context().Value(principalKey).(*principal); ok {
		return p
	}
	return &principal{}
}

// currentUser is the signed-in user, or nil.
func currentUser(r *http.Request) *store.User { return principalOf(r).user }

func isAPI(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") }

func bearer(r *http.Request) (string, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return strings.TrimSpace(tok), ok && isAPI(r)
}

// keepPeer remembers the TCP peer's address before RealIP (when enabled)
// replaces RemoteAddr with what proxy headers claim.
func keepPeer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), peerKey, r.RemoteAddr)))
	})
}

// fromLocalhost reports whether the request comes straight from this
// machine: a loopback peer and no proxy headers (a reverse proxy on the
// same host would otherwise make every visitor look local).
func fromLocalhost(r *http.Request) bool {
	for _, h := range []string{"X-Forwarded-For", "X-Real-Ip", "Forwarded", "X-Forwarded-Host"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	peer, _ := r.Context().Value(peerKey).(string)
	host, _, err := net.SplitHostPort(peer)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// clientAddr is the client's address for rate limiting (the host part of
// RemoteAddr, which RealIP rewrote when proxy headers are trusted).
func clientAddr(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// isTLS reports whether the browser reached Reach over HTTPS: a TLS
// connection, or, with --trust-proxy only, X-Forwarded-Proto: https from
// the reverse proxy (any client could send that header otherwise).
func (s *Server) isTLS(r *http.Request) bool {
	return r.TLS != nil || (s.cfg.TrustProxyHeaders && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"))
}

// identify finds who is asking: a Bearer API token on /api/ paths (a bad
// token is refused outright, never downgraded to a cookie), else the
// session cookie. It never refuses anonymous requests; the route guards do.
func (s *Server) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/static/") || r.URL.Path == "/healthz" || r.URL.Path == openAPIPath {
			// Public and the same for everyone: no session or token lookup
			// (a client holding a bad token still reads the API's description).
			next.ServeHTTP(w, r)
			return
		}
		p := &principal{}
		if tok, ok := bearer(r); ok {
			u, err := s.st.APITokenUser(r.Context(), auth.HashToken(tok))
			if errors.Is(err, store.ErrNotFound) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="reach", error="invalid_token"`)
				writeJSON(w, http.StatusUnauthorized, apiError{"invalid or revoked API token"})
				return
			}
			if err != nil {
				s.apiFail(w, r, err)
				return
			}
			p.user, p.viaToken = &u, true
		} else if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
			h := auth.HashToken(c.Value)
			u, err := s.st.SessionUser(r.Context(), h, sessionIdle, sessionMax)
			switch {
			case err == nil:
				p.user, p.sessionHash = &u, h
			case errors.Is(err, store.ErrNotFound):
				s.clearSessionCookie(w, r)
			default:
				s.fail(w, r, err)
				return
			}
		}
		ctx := context.WithValue(r.Context(), principalKey, p)
		if p.user != nil {
			u := p.user
			creator := sync.OnceValue(func() bool {
				ps, err := s.editableProjects(r.Context(), u)
				if err != nil {
					slog.Warn("projects an account edits, for the navigation", "user", u.ID, "err", err)
					return true // the form itself says what is wrong
				}
				return len(ps) > 0
			})
			ctx = views.WithViewer(ctx, views.Viewer{SignedIn: true, Email: u.Email, Admin: u.IsAdmin, Creator: creator})
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// csrf refuses cross-origin browser requests that change state (Go's
// CrossOriginProtection: Sec-Fetch-Site, else Origin against Host). API
// requests with a Bearer token carry no ambient credential and pass.
func (s *Server) csrf(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := bearer(r); !ok {
			if err := cop.Check(r); err != nil {
				s.deny(w, r, http.StatusForbidden, "Cross-origin request refused: "+err.Error())
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deny answers a refused request: JSON under /api/, an error page elsewhere.
func (s *Server) deny(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if isAPI(r) {
		writeJSON(w, status, apiError{msg})
		return
	}
	title := map[int]string{http.StatusUnauthorized: "Sign in needed", http.StatusForbidden: "Not allowed",
		http.StatusNotFound: "Not found", http.StatusTooManyRequests: "Too many attempts", http.StatusBadRequest: "Not accepted",
		http.StatusRequestEntityTooLarge: "Too large"}[status]
	s.render(w, r, status, views.ErrorPage(status, title, msg))
}

// signedIn lets only signed-in users through: pages send others to the
// sign-in page, the API answers 401. A user who signed in with a one-time
// password must set their own first.
func (s *Server) signedIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := principalOf(r)
		if p.user == nil {
			if isAPI(r) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="reach"`)
				s.deny(w, r, http.StatusUnauthorized, "sign in, or send an API token: Authorization: Bearer …")
				return
			}
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			s.deny(w, r, http.StatusUnauthorized, "Your session has ended: sign in again.")
			return
		}
		if p.user.MustChangePassword && !p.viaToken && r.URL.Path != "/account/password" {
			http.Redirect(w, r, "/account/password", http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// adminOnly lets only instance admins through (after signedIn).
func (s *Server) adminOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := currentUser(r); u == nil || !u.IsAdmin {
			s.deny(w, r, http.StatusForbidden, "Only admins can do this.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// role resolves a user's role from a project membership: admins act as
// owners everywhere.
func role(u *store.User, member string) auth.Role {
	if u != nil && u.IsAdmin {
		return auth.Owner
	}
	return auth.ParseRole(member)
}

// routeRole is the role needComparison or needProject resolved for this
// request (NoRole on other routes).
func routeRole(r *http.Request) auth.Role {
	rl, _ := r.Context().Value(roleKey).(auth.Role)
	return rl
}

func perms(rl auth.Role) views.Perms {
	return views.Perms{Edit: rl.Allows(auth.Edit), Manage: rl.Allows(auth.Manage)}
}

// needComparison guards /comparisons/{id}/… and /api/v1/comparisons/{id}/…
// (after signedIn): a comparison outside the user's projects answers 404,
// as if it did not exist; a role too low for p answers 403.
func (s *Server) needComparison(p auth.Perm) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, err := idParam(r, "id")
			if err != nil {
				s.deny(w, r, http.StatusNotFound, "There is no such comparison.")
				return
			}
			u := currentUser(r)
			_, member, err := s.st.ComparisonRole(r.Context(), id, u.ID)
			if errors.Is(err, store.ErrNotFound) {
				s.deny(w, r, http.StatusNotFound, "There is no such comparison.")
				return
			}
			if err != nil {
				s.fail(w, r, err)
				return
			}
			rl := role(u, member)
			if !rl.Allows(auth.Read) {
				s.deny(w, r, http.StatusNotFound, "There is no such comparison.")
				return
			}
			if !rl.Allows(p) {
				s.deny(w, r, http.StatusForbidden, "Your role in this comparison's project ("+rl.String()+") does not allow this.")
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), roleKey, rl)))
		})
	}
}

// needProject guards /projects/{pid}/… like needComparison.
func (s *Server) needProject(p auth.Perm) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			pid, err := idParam(r, "pid")
			if err == nil {
				_, err = s.st.GetProject(r.Context(), pid)
			}
			if errors.Is(err, store.ErrNotFound) {
				s.deny(w, r, http.StatusNotFound, "There is no such project.")
				return
			}
			if err != nil {
				s.fail(w, r, err)
				return
			}
			u := currentUser(r)
			member, err := s.st.RoleIn(r.Context(), pid, u.ID)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			rl := role(u, member)
			if !rl.Allows(auth.Read) {
				s.deny(w, r, http.StatusNotFound, "There is no such project.")
				return
			}
			if !rl.Allows(p) {
				s.deny(w, r, http.StatusForbidden, "Only the project's owners can do this.")
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), roleKey, rl)))
		})
	}
}

// editableProjects lists the projects where the user may add comparisons.
func (s *Server) editableProjects(ctx context.Context, u *store.User) ([]store.Project, error) {
	ps, err := s.st.ProjectsFor(ctx, u.ID, u.IsAdmin)
	if err != nil {
		return nil, err
	}
	var out []store.Project
	for _, p := range ps {
		if role(u, p.Role).Allows(auth.Edit) {
			out = append(out, p)
		}
	}
	return out, nil
}

// errForbidden marks an action the user's role does not allow.
var errForbidden = errors.New("not allowed")

// targetProject picks the project a new comparison goes into: the one
// asked for (by id or name), else the default project. The user must be
// an editor there; otherwise errForbidden.
func (s *Server) targetProject(ctx context.Context, u *store.User, id int64, name string) (int64, error) {
	ps, err := s.st.ProjectsFor(ctx, u.ID, u.IsAdmin)
	if err != nil {
		return 0, err
	}
	for _, p := range ps {
		match := (id != 0 && p.ID == id) || (id == 0 && name != "" && p.Name == name) || (id == 0 && name == "" && p.IsDefault)
		if !match {
			continue
		}
		if id != 0 && name != "" && p.Name != name {
			return 0, badForm("project_id %d is project %q, not %q: give one of project_id and project", id, p.Name, name)
		}
		if !role(u, p.Role).Allows(auth.Edit) {
			return 0, errForbidden
		}
		return p.ID, nil
	}
	if id == 0 && name == "" { // not a member of the default project: the first project they edit
		for _, p := range ps {
			if role(u, p.Role).Allows(auth.Edit) {
				return p.ID, nil
			}
		}
	}
	// Not among the user's projects: say so rather than blame their role
	// (and name nothing they cannot see).
	if id != 0 {
		return 0, fmt.Errorf("%w: project_id %d is not a project of yours (no such project, or you are not a member; the Projects page lists yours)", errForbidden, id)
	}
	if name != "" {
		return 0, fmt.Errorf("%w: project %q is not a project of yours (no such project, or you are not a member; the Projects page lists yours, and an admin can create it there)", errForbidden, name)
	}
	return 0, errForbidden
}

// canCreate guards the routes that create comparisons: the user must be an
// editor somewhere. It runs before a body is read, so viewers' uploads are
// refused without being streamed in.
func (s *Server) canCreate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps, err := s.editableProjects(r.Context(), currentUser(r))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if len(ps) == 0 {
			s.deny(w, r, http.StatusForbidden, "You are not an editor of any project: ask a project owner to make you one.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// useDataset checks that u may build a comparison on dataset id: admins any
// dataset, others those of the projects they are members of. An unknown
// dataset and someone else's answer alike (a form error), so ids cannot be
// probed.
func (s *Server) useDataset(ctx context.Context, u *store.User, id int64) error {
	ok := false
	if u.IsAdmin {
		_, err := s.st.GetDataset(ctx, id)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		ok = err == nil
	} else {
		var err error
		if ok, err = s.st.DatasetReadable(ctx, id, u.ID); err != nil {
			return err
		}
	}
	if !ok {
		return badForm("dataset %d is not among the datasets of your projects", id)
	}
	return nil
}

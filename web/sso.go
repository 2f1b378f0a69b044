package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/reach-lab/reach/internal/sso"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// ssoCookie keeps the sealed state, nonce and PKCE verifier of a single
// sign-on between /login/oidc and its callback (internal/sso).
const ssoCookie = "reach_sso"

// ssoLabel is the sign-in page's SSO button text ("" without SSO).
func (s *Server) ssoLabel() string {
	if s.cfg.SSO == nil {
		return ""
	}
	return s.cfg.SSO.Label()
}

func (s *Server) setSSOCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: ssoCookie, Value: value, Path: "/login/oidc", HttpOnly: true, Secure: s.isTLS(r),
		SameSite: http.SameSiteLaxMode, MaxAge: maxAge})
}

// ssoStart (GET /login/oidc?next=PATH) sends the browser to the provider.
func (s *Server) ssoStart(w http.ResponseWriter, r *http.Request) {
	if s.cfg.SSO == nil {
		s.deny(w, r, http.StatusNotFound, "There is nothing at "+r.URL.Path+".")
		return
	}
	next := safeNext(r.URL.Query().Get("next"))
	if currentUser(r) != nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	authURL, cookie, err := s.cfg.SSO.Start(r.Context(), next)
	if err != nil {
		s.log.Error("single sign-on: the provider cannot be reached", "err", err)
		s.ssoRefuse(w, r, http.StatusBadGateway, "The sign-in provider cannot be reached now. Try again later, or sign in with a password.")
		return
	}
	s.setSSOCookie(w, r, cookie, int(sso.FlowTTL/time.Second))
	http.Redirect(w, r, authURL, http.StatusFound)
}

// ssoRefuse shows the sign-in page with why single sign-on did not sign
// the browser in.
func (s *Server) ssoRefuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, status, views.LoginPage(views.LoginForm{Next: "/", Error: msg, SSOLabel: s.ssoLabel()}))
}

// ssoCallback (GET /login/oidc/callback) ends a single sign-on: the
// provider's identity (internal/sso checks state, nonce, ID token and
// verified email) is matched to an account by email, or one is created
// when the email's domain is allowed; then a session starts, as a password
// sign-in would. Each callback counts against the client address's
// sign-in limit; a successful one is taken back.
func (s *Server) ssoCallback(w http.ResponseWriter, r *http.Request) {
	if s.cfg.SSO == nil {
		s.deny(w, r, http.StatusNotFound, "There is nothing at "+r.URL.Path+".")
		return
	}
	addr := clientAddr(r)
	if ok, wait := s.login.byAddress.Take(addr); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		s.log.Warn("single sign-on refused", "addr", addr, "why", "too many sign-ins")
		s.ssoRefuse(w, r, http.StatusTooManyRequests, fmt.Sprintf("Too many failed sign-ins. Try again in %d minutes.", int(wait.Minutes())+1))
		return
	}
	cookie := ""
	if c, err := r.Cookie(ssoCookie); err == nil {
		cookie = c.Value
	}
	s.setSSOCookie(w, r, "", -1) // a flow is used once
	id, next, err := s.cfg.SSO.Finish(r.Context(), cookie, sso.CallbackFrom(r.URL.Query()))
	if err != nil {
		status, msg := ssoRefusal(err)
		s.log.Warn("single sign-on refused", "addr", addr, "email", id.Email, "err", err)
		s.ssoRefuse(w, r, status, msg)
		return
	}
	u, err := s.st.UserByEmail(r.Context(), id.Email)
	switch {
	case err == nil:
	case errors.Is(err, store.ErrNotFound):
		if !s.cfg.SSO.MayCreate(id.Email) {
			s.log.Warn("single sign-on refused", "addr", addr, "email", id.Email, "why", "no account, domain not allowed")
			s.ssoRefuse(w, r, http.StatusForbidden, "Accounts from "+sso.Domain(id.Email)+
				" are not created here: ask an admin for an invitation.")
			return
		}
		u, err = s.st.CreateSSOUser(r.Context(), id.Email, s.cfg.SSO.DefaultRole())
		if errors.Is(err, store.ErrExists) { // created by a sign-in at the same moment
			u, err = s.st.UserByEmail(r.Context(), id.Email)
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		s.log.Info("account created by single sign-on", "user", u.Email, "role", s.cfg.SSO.DefaultRole(), "addr", addr)
	default:
		s.fail(w, r, err)
		return
	}
	if u.Disabled {
		s.log.Warn("single sign-on refused", "addr", addr, "email", u.Email, "why", "account disabled")
		s.ssoRefuse(w, r, http.StatusForbidden, "This account is disabled: ask an admin.")
		return
	}
	s.login.byAddress.Forgive(addr)
	if err := s.startSession(w, r, u); err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("signed in", "user", u.Email, "addr", addr, "via", "sso", "subject", id.Subject)
	http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
}

// ssoRefusal is the status and the page's text for a refused callback.
func ssoRefusal(err error) (int, string) {
	switch {
	case errors.Is(err, sso.ErrState):
		return http.StatusBadRequest, "This sign-in expired or was not started in this browser. Start it again."
	case errors.Is(err, sso.ErrProvider):
		return http.StatusForbidden, "The sign-in provider did not sign you in."
	case errors.Is(err, sso.ErrEmailNotVerified):
		return http.StatusForbidden, "Your email is not verified at the sign-in provider: verify it there, then sign in again."
	case errors.Is(err, sso.ErrNoEmail):
		return http.StatusForbidden, "The sign-in provider gave no email address, so no account can be matched."
	case errors.Is(err, sso.ErrIDToken), errors.Is(err, sso.ErrNonce), errors.Is(err, sso.ErrExchange):
		return http.StatusUnauthorized, "The sign-in provider's answer could not be verified, so you are not signed in. " +
			"Try again; if it keeps failing, an admin finds the cause in the server log."
	}
	return http.StatusBadGateway, "The sign-in provider cannot be reached now. Try again later, or sign in with a password."
}

package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/reach-lab/reach/internal/auth"
	"github.com/reach-lab/reach/internal/netpolicy"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// Sign-in limits, each within loginWindow; attempts are counted before the
// password is checked (a successful one is taken back):
//
//   - per browser known to the account (it signed in there before and
//     holds a device cookie for it): loginPerDevice. Such a browser is never
//     held back by failures from anywhere else, so guessing cannot lock the
//     owner out of their usual browser.
//   - from other browsers, per account and client address:
//     loginPerAccountAddress, and per account from all addresses together:
//     loginPerAccount. One guessing address blocks only itself; the owner
//     from a new browser is held back only by guessing from many addresses.
//   - per client address over all accounts: loginPerAddress (spraying).
//
// Password checks (argon2id, 19 MiB each) also pass a gate of one slot per
// core; a request that waits longer than passwordWait for a slot gets 429.
const (
	loginPerDevice         = 5
	loginPerAccountAddress = 5
	loginPerAccount        = 20
	loginPerAddress        = 20
	loginWindow            = 15 * time.Minute
	passwordWait           = 5 * time.Second
	deviceCookie           = "reach_device"
	deviceCookieAge        = 365 * 24 * time.Hour
	inviteTTL              = 7 * 24 * time.Hour
)

// loginLimits are the sign-in limiters and the argon2 gate.
type loginLimits struct {
	byDevice, byAccountAddress, byAccount, byAddress *auth.Limiter
	gate                                             *auth.Gate
	devices                                          *auth.Devices
}

func newLoginLimits() (*loginLimits, error) {
	d, err := auth.NewDevices()
	if err != nil {
		return nil, err
	}
	return &loginLimits{
		byDevice:         auth.NewLimiter(loginPerDevice, loginWindow),
		byAccountAddress: auth.NewLimiter(loginPerAccountAddress, loginWindow),
		byAccount:        auth.NewLimiter(loginPerAccount, loginWindow),
		byAddress:        auth.NewLimiter(loginPerAddress, loginWindow),
		gate:             auth.NewGate(0, passwordWait),
		devices:          d,
	}, nil
}

// take counts one attempt against each (limiter, key) pair, all or none:
// when one refuses, the attempts already taken are forgiven and the wait
// until it allows again is returned.
func take(pairs ...limitKey) (bool, time.Duration) {
	for i, p := range pairs {
		if ok, wait := p.lim.Take(p.key); !ok {
			for _, q := range pairs[:i] {
				q.lim.Forgive(q.key)
			}
			return false, wait
		}
	}
	return true, 0
}

type limitKey struct {
	lim *auth.Limiter
	key string
}

// checkPassword runs auth.CheckPassword in a gate slot: auth.ErrBusy when
// none freed up in time.
func (s *Server) checkPassword(r *http.Request, hash, password string) error {
	var err error
	if gerr := s.login.gate.Do(r.Context(), func() { err = auth.CheckPassword(hash, password) }); gerr != nil {
		return gerr
	}
	return err
}

// hashPassword runs auth.HashPassword in a gate slot.
func (s *Server) hashPassword(r *http.Request, password string) (string, error) {
	var h string
	var err error
	if gerr := s.login.gate.Do(r.Context(), func() { h, err = auth.HashPassword(password, auth.DefaultParams) }); gerr != nil {
		return "", gerr
	}
	return h, err
}

// dummyHash is checked against when the email is unknown, so that a wrong
// email takes as long as a wrong password.
var dummyHash = sync.OnceValue(func() string {
	h, err := auth.HashPassword("reach-dummy-password", auth.DefaultParams)
	if err != nil {
		panic(err) // crypto/rand failed: nothing can work
	}
	return h
})

// safeNext keeps a post-sign-in redirect on this site: only a clean
// absolute path ("/comparisons/3?pair=2") passes; anything else becomes
// "/". Browsers drop tabs and newlines from URLs and read "\" as "/", so
// "/\t/evil.example" or "/\\evil.example" would leave the site: control
// characters, spaces, backslashes, "//" at the start, and anything with a
// scheme or host are refused.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || len(next) > 2048 {
		return "/"
	}
	for _, c := range []byte(next) {
		if c <= ' ' || c == 0x7f || c == '\\' {
			return "/"
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") ||
		strings.HasPrefix(u.Path, "//") {
		return "/"
	}
	return next
}

// chiParam is a URL parameter of the matched route.
func chiParam(r *http.Request, name string) string { return chi.URLParam(r, name) }

// baseURL is the instance's address for links handed out (share links,
// invitations): Config.BaseURL, else the scheme and host of the request.
func (s *Server) baseURL(r *http.Request) string {
	if s.cfg.BaseURL != "" {
		return strings.TrimRight(s.cfg.BaseURL, "/")
	}
	scheme := "http"
	if s.isTLS(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (s *Server) setSessionCookie(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: token, Path: "/", HttpOnly: true, Secure: s.isTLS(r),
		SameSite: http.SameSiteLaxMode, MaxAge: int(sessionMax / time.Second)})
}

func (s *Server) clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true, Secure: s.isTLS(r),
		SameSite: http.SameSiteLaxMode, MaxAge: -1})
}

// startSession signs u in on this browser.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, u store.User) error {
	token, hash, err := auth.NewToken(auth.PrefixSession)
	if err != nil {
		return err
	}
	if err := s.st.CreateSession(r.Context(), hash, u.ID, time.Now().Add(sessionIdle)); err != nil {
		return err
	}
	// Sign-ins are rare: a good moment to forget sessions that ended.
	if err := s.st.DeleteExpiredSessions(r.Context()); err != nil {
		s.log.Warn("delete expired sessions", "err", err)
	}
	s.setSessionCookie(w, r, token)
	return nil
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	if currentUser(r) != nil {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	n, err := s.st.CountUsers(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.LoginPage(views.LoginForm{Next: safeNext(r.URL.Query().Get("next")), NoUsers: n == 0,
		Local: fromLocalhost(r) && localHostName(r.Host), SSOLabel: s.ssoLabel()}))
}

func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	email := store.NormalizeEmail(r.PostForm.Get("email"))
	password := r.PostForm.Get("password")
	form := views.LoginForm{Email: truncate(email, maxEmail), Next: safeNext(r.PostForm.Get("next")), SSOLabel: s.ssoLabel()}
	addr := clientAddr(r)
	if len(email) > maxEmail {
		form.Error = "Wrong email or password."
		s.render(w, r, http.StatusUnauthorized, views.LoginPage(form))
		return
	}
	l := s.login
	// A browser that signed in to this account before is limited on its
	// own; any other is limited per account and address, and per account.
	limits := []limitKey{{l.byAddress, addr}}
	device, known := "", false
	if c, err := r.Cookie(deviceCookie); err == nil {
		device, known = l.devices.Check(c.Value, email)
	}
	if known {
		limits = append(limits, limitKey{l.byDevice, device})
	} else {
		limits = append(limits, limitKey{l.byAccountAddress, email + "\x00" + addr}, limitKey{l.byAccount, email})
	}
	tooMany := func(wait time.Duration, why string) {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		form.Error = why
		s.log.Warn("sign-in refused", "email", email, "addr", addr, "known_browser", known, "why", why)
		s.render(w, r, http.StatusTooManyRequests, views.LoginPage(form))
	}
	if ok, wait := take(limits...); !ok {
		tooMany(wait, fmt.Sprintf("Too many failed sign-ins. Try again in %d minutes.", int(wait.Minutes())+1))
		return
	}
	forgive := func() {
		for _, k := range limits {
			k.lim.Forgive(k.key)
		}
	}
	u, err := s.st.UserByEmail(r.Context(), email)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		forgive()
		s.fail(w, r, err)
		return
	}
	exists := err == nil && !u.Disabled && u.PasswordHash != ""
	hash := dummyHash() // an unknown email costs as much as a wrong password
	if exists {
		hash = u.PasswordHash
	}
	err = auth.ErrMismatch
	if len(password) <= maxPassword {
		err = s.checkPassword(r, hash, password)
	}
	if errors.Is(err, auth.ErrBusy) || errors.Is(err, context.Canceled) {
		forgive() // not checked: it does not count
		tooMany(time.Second, "The server is busy checking other sign-ins. Try again in a moment.")
		return
	}
	if err != nil || !exists {
		s.log.Warn("sign-in failed", "email", email, "addr", addr, "known_browser", known)
		form.Error = "Wrong email or password."
		s.render(w, r, http.StatusUnauthorized, views.LoginPage(form))
		return
	}
	// Success: this attempt does not count, and the browser's (or the
	// account's, from this address) failures are forgotten. The address's
	// other failures stay: signing in to one's own account must not reset
	// a count that guessing at others built up.
	l.byAddress.Forgive(addr)
	if known {
		l.byDevice.Reset(device)
	} else {
		l.byAccountAddress.Reset(email + "\x00" + addr)
		l.byAccount.Forgive(email)
	}
	if err := s.startSession(w, r, u); err != nil {
		s.fail(w, r, err)
		return
	}
	if tok, err := l.devices.Issue(email); err == nil {
		http.SetCookie(w, &http.Cookie{Name: deviceCookie, Value: tok, Path: "/login", HttpOnly: true, Secure: s.isTLS(r),
			SameSite: http.SameSiteStrictMode, MaxAge: int(deviceCookieAge / time.Second)})
	}
	s.log.Info("signed in", "user", u.Email, "addr", addr, "known_browser", known)
	target := form.Next
	if u.MustChangePassword {
		target = "/account/password"
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if h := principalOf(r).sessionHash; h != nil {
		if err := s.st.DeleteSession(r.Context(), h); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	s.clearSessionCookie(w, r)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// setupAllowed: the first-run page exists only on an instance without
// accounts, and only for requests from this machine that name this machine:
// a loopback peer without proxy headers, and a Host that is a localhost
// name. The Host check stops DNS rebinding (a foreign site whose name
// resolves to 127.0.0.1 sends its own name as Host). A POST must also be
// same-origin by Sec-Fetch-Site or Origin; a request with neither is
// refused (the CLI's `reach user create --admin` needs no page).
func (s *Server) setupAllowed(w http.ResponseWriter, r *http.Request) bool {
	n, err := s.st.CountUsers(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return false
	}
	if n > 0 || !fromLocalhost(r) || !localHostName(r.Host) {
		s.deny(w, r, http.StatusNotFound, "There is nothing at "+r.URL.Path+".")
		return false
	}
	if r.Method == http.MethodPost && !sameOrigin(r) {
		s.deny(w, r, http.StatusForbidden, "Open the first-run page in a browser on this machine, or create the admin with `reach user create --admin EMAIL`.")
		return false
	}
	return true
}

// localHostName reports whether a Host header names this machine:
// localhost, a *.localhost name (RFC 6761) or a loopback address, any port.
func localHostName(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin reports whether a browser says the request comes from this
// origin: Sec-Fetch-Site: same-origin, or an Origin equal to the Host's.
func sameOrigin(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "same-origin" {
		return true
	}
	o, err := url.Parse(r.Header.Get("Origin"))
	return err == nil && (o.Scheme == "http" || o.Scheme == "https") && strings.EqualFold(o.Host, r.Host) && o.Path == ""
}

func (s *Server) setupPage(w http.ResponseWriter, r *http.Request) {
	if s.setupAllowed(w, r) {
		s.render(w, r, http.StatusOK, views.SetupPage(views.PasswordForm{}))
	}
}

func (s *Server) setup(w http.ResponseWriter, r *http.Request) {
	if !s.setupAllowed(w, r) {
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	f := views.PasswordForm{Email: store.NormalizeEmail(r.PostForm.Get("email"))}
	msg := ""
	if !strings.Contains(f.Email, "@") {
		msg = "Give an email address."
	} else if err := tooLong("Email", f.Email, maxEmail); err != nil {
		msg, f.Email = err.Error(), ""
	}
	hash := ""
	if msg == "" {
		hash, msg = s.newPasswordHash(r, r.PostForm.Get("password"), r.PostForm.Get("confirm"))
	}
	if msg != "" {
		f.Error = msg
		s.render(w, r, http.StatusBadRequest, views.SetupPage(f))
		return
	}
	u, err := s.st.CreateFirstAdmin(r.Context(), f.Email, hash)
	if errors.Is(err, store.ErrHasUsers) {
		s.deny(w, r, http.StatusNotFound, "The instance already has accounts: sign in.")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.startSession(w, r, u); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// newPasswordHash checks a new password and its confirmation and hashes
// it; msg says what is wrong (hash is empty then).
func (s *Server) newPasswordHash(r *http.Request, password, confirm string) (hash, msg string) {
	if err := auth.CheckPasswordPolicy(password); err != nil {
		return "", "Password: " + err.Error() + "."
	}
	if password != confirm {
		return "", "The two passwords differ."
	}
	h, err := s.hashPassword(r, password)
	if errors.Is(err, auth.ErrBusy) {
		return "", "The server is busy checking sign-ins. Try again in a moment."
	}
	if err != nil {
		return "", s.internal(r, err)
	}
	return h, ""
}

func (s *Server) accountPage(w http.ResponseWriter, r *http.Request) {
	u := currentUser(r)
	s.render(w, r, http.StatusOK, views.PasswordPage(views.PasswordForm{Email: u.Email, MustChange: u.MustChangePassword}))
}

func (s *Server) changePassword(w http.ResponseWriter, r *http.Request) {
	u := currentUser(r)
	if !s.parseForm(w, r) {
		return
	}
	f := views.PasswordForm{Email: u.Email, MustChange: u.MustChangePassword}
	// Guessing the current password with a stolen session is limited like
	// signing in from an unknown browser.
	key := "change\x00" + u.Email
	if ok, wait := s.login.byAccount.Take(key); !ok {
		f.Error = fmt.Sprintf("Too many wrong current passwords. Try again in %d minutes.", int(wait.Minutes())+1)
		s.render(w, r, http.StatusTooManyRequests, views.PasswordPage(f))
		return
	}
	current := r.PostForm.Get("current")
	err := auth.ErrMismatch
	if len(current) <= maxPassword {
		err = s.checkPassword(r, u.PasswordHash, current)
	}
	if errors.Is(err, auth.ErrBusy) {
		s.login.byAccount.Forgive(key)
		f.Error = "The server is busy checking sign-ins. Try again in a moment."
		s.render(w, r, http.StatusTooManyRequests, views.PasswordPage(f))
		return
	}
	if err != nil {
		f.Error = "The current password is wrong."
		s.render(w, r, http.StatusBadRequest, views.PasswordPage(f))
		return
	}
	s.login.byAccount.Forgive(key)
	hash, msg := s.newPasswordHash(r, r.PostForm.Get("password"), r.PostForm.Get("confirm"))
	if msg != "" {
		f.Error = msg
		s.render(w, r, http.StatusBadRequest, views.PasswordPage(f))
		return
	}
	if err := s.st.SetPassword(r.Context(), u.ID, hash, false, principalOf(r).sessionHash); err != nil {
		s.fail(w, r, err)
		return
	}
	f.MustChange, f.Done = false, true
	s.render(w, r, http.StatusOK, views.PasswordPage(f))
}

func (s *Server) tokensPage(w http.ResponseWriter, r *http.Request) {
	s.renderTokens(w, r, "", "")
}

func (s *Server) renderTokens(w http.ResponseWriter, r *http.Request, newToken, msg string) {
	s.renderTokensStatus(w, r, http.StatusOK, newToken, msg)
}

func (s *Server) renderTokensStatus(w http.ResponseWriter, r *http.Request, status int, newToken, msg string) {
	ts, err := s.st.ListAPITokens(r.Context(), currentUser(r).ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, status, views.TokensPage(views.TokensView{Tokens: ts, New: newToken, Error: msg, BaseURL: s.baseURL(r)}))
}

// tokenPrefixLen is how much of a token the list shows to recognise it.
const tokenPrefixLen = len(auth.PrefixAPI) + 4

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	name := strings.TrimSpace(r.PostForm.Get("name"))
	if name == "" {
		s.renderTokens(w, r, "", "Give the token a name (what uses it).")
		return
	}
	if err := tooLong("Token name", name, maxName); err != nil {
		s.renderTokensStatus(w, r, http.StatusBadRequest, "", err.Error())
		return
	}
	token, hash, err := auth.NewToken(auth.PrefixAPI)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if _, err := s.st.CreateAPIToken(r.Context(), currentUser(r).ID, name, token[:tokenPrefixLen], hash); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	s.renderTokens(w, r, token, "")
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "tid")
	if err == nil {
		err = s.st.RevokeAPIToken(r.Context(), currentUser(r).ID, id)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/account/tokens", http.StatusSeeOther)
}

func (s *Server) usersPage(w http.ResponseWriter, r *http.Request) {
	s.renderUsers(w, r, "", "")
}

func (s *Server) renderUsers(w http.ResponseWriter, r *http.Request, inviteURL, msg string) {
	s.renderUsersView(w, r, views.UsersView{InviteURL: inviteURL, Error: msg})
}

func (s *Server) renderUsersView(w http.ResponseWriter, r *http.Request, v views.UsersView) {
	status := http.StatusOK
	if v.Error != "" {
		status = http.StatusBadRequest
	}
	var err error
	if v.Users, err = s.st.ListUsers(r.Context()); err != nil {
		s.fail(w, r, err)
		return
	}
	if v.Projects, err = s.st.ProjectsFor(r.Context(), currentUser(r).ID, true); err != nil {
		s.fail(w, r, err)
		return
	}
	if v.Invites, err = s.st.OpenInvites(r.Context()); err != nil {
		s.fail(w, r, err)
		return
	}
	v.Me = currentUser(r).ID
	if v.InviteURL != "" || v.Password != "" {
		w.Header().Set("Cache-Control", "no-store")
	}
	s.render(w, r, status, views.UsersPage(v))
}

// otherUser is user {uid} for an admin action on someone else's account:
// admins cannot disable or reset themselves here (the password page is
// for their own), so no admin locks themselves out.
func (s *Server) otherUser(w http.ResponseWriter, r *http.Request) (store.User, bool) {
	uid, err := idParam(r, "uid")
	var u store.User
	if err == nil {
		u, err = s.st.GetUser(r.Context(), uid)
	}
	if err != nil {
		s.fail(w, r, err)
		return u, false
	}
	if u.ID == currentUser(r).ID {
		s.deny(w, r, http.StatusBadRequest, "You cannot do this to your own account: another admin can.")
		return u, false
	}
	return u, true
}

// disableConfirm asks before an account is disabled (GET).
func (s *Server) disableConfirm(w http.ResponseWriter, r *http.Request) {
	if u, ok := s.otherUser(w, r); ok {
		s.render(w, r, http.StatusOK, views.UserActionConfirm(views.UserActionView{Title: "Disable " + u.Email + "?",
			Text: "They are signed out everywhere at once, their API tokens stop working for good, and they cannot sign in until an " +
				"admin enables the account again. Their comparisons, reviews and share links stay.",
			Action: fmt.Sprintf("/admin/users/%d/disable", u.ID), Button: "Disable " + u.Email}))
	}
}

// setDisabled disables (disabled) or re-enables user {uid}.
func (s *Server) setDisabled(disabled bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, ok := s.otherUser(w, r)
		if !ok {
			return
		}
		if err := s.st.SetDisabled(r.Context(), u.ID, disabled); err != nil {
			s.fail(w, r, err)
			return
		}
		s.log.Info("account disabled or enabled", "user", u.Email, "disabled", disabled, "by", currentUser(r).Email)
		http.Redirect(w, r, "/admin/users", http.StatusSeeOther)
	}
}

// resetConfirm asks before an admin resets someone's password (GET).
func (s *Server) resetConfirm(w http.ResponseWriter, r *http.Request) {
	if u, ok := s.otherUser(w, r); ok {
		s.render(w, r, http.StatusOK, views.UserActionConfirm(views.UserActionView{Title: "Reset the password of " + u.Email + "?",
			Text: "They get a one-time password, shown to you once, and must choose a new one when they sign in. " +
				"Their sessions end and their API tokens are revoked.",
			Action: fmt.Sprintf("/admin/users/%d/reset-password", u.ID), Button: "Reset the password"}))
	}
}

// resetPassword gives user {uid} a one-time password and ends their
// sessions and API tokens (POST).
func (s *Server) resetPassword(w http.ResponseWriter, r *http.Request) {
	u, ok := s.otherUser(w, r)
	if !ok {
		return
	}
	password, err := auth.OneTimePassword()
	var hash string
	if err == nil {
		hash, err = s.hashPassword(r, password)
	}
	if err == nil {
		err = s.st.ResetPassword(r.Context(), u.ID, hash)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("password reset by an admin", "user", u.Email, "by", currentUser(r).Email)
	s.renderUsersView(w, r, views.UsersView{Password: password, PasswordOf: u.Email})
}

// inviteForRevoke is open invitation {iid}.
func (s *Server) inviteForRevoke(w http.ResponseWriter, r *http.Request) (store.Invite, bool) {
	iid, err := idParam(r, "iid")
	if err != nil {
		s.fail(w, r, err)
		return store.Invite{}, false
	}
	is, err := s.st.OpenInvites(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return store.Invite{}, false
	}
	for _, inv := range is {
		if inv.ID == iid {
			return inv, true
		}
	}
	s.deny(w, r, http.StatusNotFound, "This invitation was used, revoked or has expired.")
	return store.Invite{}, false
}

// revokeInviteConfirm asks before an invitation is revoked (GET).
func (s *Server) revokeInviteConfirm(w http.ResponseWriter, r *http.Request) {
	if inv, ok := s.inviteForRevoke(w, r); ok {
		s.render(w, r, http.StatusOK, views.UserActionConfirm(views.UserActionView{Title: "Revoke the invitation of " + inv.Email + "?",
			Text:   "Its link then says the invitation was revoked, used or has expired. Invite them again to send a new link.",
			Action: fmt.Sprintf("/admin/invites/%d/revoke", inv.ID), Button: "Revoke the invitation"}))
	}
}

func (s *Server) revokeInvite(w http.ResponseWriter, r *http.Request) {
	inv, ok := s.inviteForRevoke(w, r)
	if !ok {
		return
	}
	if err := s.st.RevokeInvite(r.Context(), inv.ID); err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("invitation revoked", "email", inv.Email, "by", currentUser(r).Email)
	http.Redirect(w, r, "/admin/users", http.StatusSeeOther)
}

func (s *Server) createInvite(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	email := store.NormalizeEmail(r.PostForm.Get("email"))
	if !strings.Contains(email, "@") {
		s.renderUsers(w, r, "", "Give the email address of the person to invite.")
		return
	}
	if err := tooLong("Email", email, maxEmail); err != nil {
		s.renderUsers(w, r, "", err.Error())
		return
	}
	if _, err := s.st.UserByEmail(r.Context(), email); err == nil {
		s.renderUsers(w, r, "", email+" already has an account: add them to a project on its page.")
		return
	}
	inv := store.Invite{Email: email, IsAdmin: r.PostForm.Get("admin") == "on", CreatedBy: currentUser(r).ID,
		ExpiresAt: time.Now().Add(inviteTTL), Role: "viewer"}
	if pid, err := strconv.ParseInt(r.PostForm.Get("project_id"), 10, 64); err == nil && pid > 0 {
		inv.ProjectID = &pid
		if rl := auth.ParseRole(r.PostForm.Get("role")); rl != auth.NoRole {
			inv.Role = rl.String()
		}
	}
	token, hash, err := auth.NewToken(auth.PrefixInvite)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.st.CreateInvite(r.Context(), hash, inv); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	s.renderUsers(w, r, s.baseURL(r)+"/invite/"+token, "")
}

// setProjectCreator is the users page's switch: POST allowed=on lets
// user {uid} create projects, anything else stops them.
func (s *Server) setProjectCreator(w http.ResponseWriter, r *http.Request) {
	uid, err := idParam(r, "uid")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	if err := s.st.SetProjectCreator(r.Context(), uid, r.PostForm.Get("allowed") == "on"); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/users", http.StatusSeeOther)
}

func (s *Server) networkPage(w http.ResponseWriter, r *http.Request) {
	text, err := netpolicy.Text(r.Context(), s.st)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.NetworkPage(views.NetworkView{Text: text}))
}

// setNetwork stores the endpoint network policy (POST policy) and puts it
// in force in this process; workers reload it (internal/netpolicy).
func (s *Server) setNetwork(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	text := strings.ReplaceAll(r.PostForm.Get("policy"), "\r\n", "\n")
	err := netpolicy.Save(r.Context(), s.st, text, currentUser(r).ID)
	if err != nil && !fromDatabase(err) {
		s.render(w, r, http.StatusBadRequest, views.NetworkPage(views.NetworkView{Text: truncate(text, netpolicy.MaxTextBytes),
			Error: "Not saved: " + err.Error()}))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("endpoint network policy changed", "by", currentUser(r).Email)
	s.render(w, r, http.StatusOK, views.NetworkPage(views.NetworkView{Text: text, Saved: true}))
}

// inviteGone is what a link that cannot be accepted says.
const inviteGone = "This invitation was used, revoked or has expired, or never existed: ask an admin for a new one."

// openInvite returns the invitation of the link and the page describing
// it; ok is false when the answer was sent (gone, or the database failed).
func (s *Server) openInvite(w http.ResponseWriter, r *http.Request) (store.Invite, views.InviteView, *store.User, bool) {
	inv, err := s.st.OpenInvite(r.Context(), auth.HashToken(chiParam(r, "token")))
	if errors.Is(err, store.ErrNotFound) {
		s.deny(w, r, http.StatusNotFound, inviteGone)
		return inv, views.InviteView{}, nil, false
	}
	if err != nil {
		s.fail(w, r, err)
		return inv, views.InviteView{}, nil, false
	}
	v := views.InviteView{Email: inv.Email, Project: inv.Project, Role: inv.Role, Admin: inv.IsAdmin}
	u, err := s.st.UserByEmail(r.Context(), inv.Email)
	switch {
	case err == nil:
		v.Existing = true
		return inv, v, &u, true
	case errors.Is(err, store.ErrNotFound):
		return inv, v, nil, true
	}
	s.fail(w, r, err)
	return inv, v, nil, false
}

func (s *Server) invitePage(w http.ResponseWriter, r *http.Request) {
	if _, v, _, ok := s.openInvite(w, r); ok {
		s.render(w, r, http.StatusOK, views.InvitePage(v))
	}
}

func (s *Server) acceptInvite(w http.ResponseWriter, r *http.Request) {
	_, v, existing, ok := s.openInvite(w, r)
	if !ok || !s.parseForm(w, r) {
		return
	}
	hash := auth.HashToken(chiParam(r, "token"))
	if existing != nil {
		s.joinByInvite(w, r, hash, *existing, v)
		return
	}
	pw, msg := s.newPasswordHash(r, r.PostForm.Get("password"), r.PostForm.Get("confirm"))
	if msg != "" {
		v.Error = msg
		s.render(w, r, http.StatusBadRequest, views.InvitePage(v))
		return
	}
	u, err := s.st.AcceptInvite(r.Context(), hash, pw)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.startSession(w, r, u); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// joinByInvite accepts an invitation for an email that has an account:
// the account's own password (limited like signing in from an unknown
// browser) signs it in and joins it to the invitation's project.
func (s *Server) joinByInvite(w http.ResponseWriter, r *http.Request, hash []byte, u store.User, v views.InviteView) {
	l, addr := s.login, clientAddr(r)
	limits := []limitKey{{l.byAddress, addr}, {l.byAccountAddress, u.Email + "\x00" + addr}, {l.byAccount, u.Email}}
	if ok, wait := take(limits...); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		v.Error = fmt.Sprintf("Too many failed sign-ins. Try again in %d minutes.", int(wait.Minutes())+1)
		s.render(w, r, http.StatusTooManyRequests, views.InvitePage(v))
		return
	}
	password := r.PostForm.Get("current")
	err := auth.ErrMismatch
	if len(password) <= maxPassword && u.PasswordHash != "" {
		err = s.checkPassword(r, u.PasswordHash, password)
	}
	if errors.Is(err, auth.ErrBusy) || errors.Is(err, context.Canceled) {
		for _, k := range limits {
			k.lim.Forgive(k.key)
		}
		v.Error = "The server is busy checking other sign-ins. Try again in a moment."
		s.render(w, r, http.StatusTooManyRequests, views.InvitePage(v))
		return
	}
	if err != nil || u.Disabled {
		// A disabled account gets the same answer, so the link does not
		// tell whether the account is disabled.
		s.log.Warn("invitation sign-in failed", "email", u.Email, "addr", addr, "disabled", u.Disabled)
		v.Error = "Wrong password, or the account is disabled: ask an admin."
		s.render(w, r, http.StatusUnauthorized, views.InvitePage(v))
		return
	}
	for _, k := range limits {
		k.lim.Forgive(k.key)
	}
	if err := s.st.JoinByInvite(r.Context(), hash, u.ID); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.startSession(w, r, u); err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("invitation accepted by an existing account", "user", u.Email, "project", v.Project, "role", v.Role)
	target := "/"
	if u.MustChangePassword {
		target = "/account/password"
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func (s *Server) projectsPage(w http.ResponseWriter, r *http.Request) {
	s.renderProjects(w, r, http.StatusOK, "")
}

func (s *Server) renderProjects(w http.ResponseWriter, r *http.Request, status int, msg string) {
	u := currentUser(r)
	ps, err := s.st.ProjectsFor(r.Context(), u.ID, u.IsAdmin)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, status, views.ProjectsPage(ps, msg, mayCreateProjects(u)))
}

// mayCreateProjects: admins, and the users an admin allowed to. Creating a
// project makes the creator its owner, with uploads, sampling and Test
// connection, so it is not for every account.
func mayCreateProjects(u *store.User) bool { return u != nil && (u.IsAdmin || u.CanCreateProjects) }

func (s *Server) createProject(w http.ResponseWriter, r *http.Request) {
	if !mayCreateProjects(currentUser(r)) {
		s.deny(w, r, http.StatusForbidden, "Only admins, and the users an admin allows to, can create projects.")
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	name := strings.TrimSpace(r.PostForm.Get("name"))
	if name == "" {
		s.renderProjects(w, r, http.StatusBadRequest, "Give the project a name.")
		return
	}
	if err := tooLong("Project name", name, maxName); err != nil {
		s.renderProjects(w, r, http.StatusBadRequest, err.Error())
		return
	}
	id, err := s.st.CreateProject(r.Context(), name, currentUser(r).ID)
	if errors.Is(err, store.ErrExists) {
		s.renderProjects(w, r, http.StatusBadRequest, fmt.Sprintf("A project called %q exists already.", name))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/projects/%d", id), http.StatusSeeOther)
}

func (s *Server) projectPage(w http.ResponseWriter, r *http.Request) {
	s.renderProject(w, r, http.StatusOK, "")
}

func (s *Server) renderProject(w http.ResponseWriter, r *http.Request, status int, msg string) {
	pid, _ := idParam(r, "pid")
	p, err := s.st.GetProject(r.Context(), pid)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ms, err := s.st.Members(r.Context(), pid)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, status, views.ProjectPage(views.ProjectView{P: p, Members: ms, Manage: routeRole(r).Allows(auth.Manage), Error: msg}))
}

func (s *Server) setMember(w http.ResponseWriter, r *http.Request) {
	pid, _ := idParam(r, "pid")
	if !s.parseForm(w, r) {
		return
	}
	rl := auth.ParseRole(r.PostForm.Get("role"))
	if rl == auth.NoRole {
		s.renderProject(w, r, http.StatusBadRequest, "Choose owner, editor or viewer.")
		return
	}
	if err := tooLong("Email", r.PostForm.Get("email"), maxEmail); err != nil {
		s.renderProject(w, r, http.StatusBadRequest, err.Error())
		return
	}
	u, err := s.st.UserByEmail(r.Context(), r.PostForm.Get("email"))
	if errors.Is(err, store.ErrNotFound) {
		s.renderProject(w, r, http.StatusBadRequest, "No account has that email: an admin can invite them.")
		return
	}
	if err == nil {
		err = s.st.SetMember(r.Context(), pid, u.ID, rl.String())
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/projects/%d", pid), http.StatusSeeOther)
}

func (s *Server) removeMember(w http.ResponseWriter, r *http.Request) {
	pid, _ := idParam(r, "pid")
	uid, err := idParam(r, "uid")
	if err == nil {
		err = s.st.RemoveMember(r.Context(), pid, uid)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/projects/%d", pid), http.StatusSeeOther)
}

package web_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/sso"
	"github.com/reach-lab/reach/internal/ssotest"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/web"
)

// ssoEnv is Reach with single sign-on at a real OpenID provider (zitadel's
// op package, started here), where Reach is client "reach".
type ssoEnv struct {
	st  *store.Store
	url string
	op  *ssotest.Provider
	log *lockedBuffer // Reach's log, warnings and up
}

// lockedBuffer is a log's text, written by the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// take returns what was logged since the last take.
func (l *lockedBuffer) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	l.b.Reset()
	return s
}

// newSSO starts a provider and Reach with accounts created for domains,
// with role in the default project.
func newSSO(t *testing.T, domains []string, role string) ssoEnv {
	t.Helper()
	op := ssotest.Start(t)
	st, _ := testdb.New(t)
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	client, err := jobs.NewClient(st, jobs.Config{Workers: 0, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	op.AddClient("reach", "reach-secret", base+"/login/oidc/callback")
	op.AddClient("other-app", "other-secret", "http://other.test/callback")
	box, err := secret.New("sso test")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sso.New(sso.Config{Issuer: op.Issuer, ClientID: "reach", ClientSecret: "reach-secret", RedirectURL: base + "/login/oidc/callback",
		AllowedDomains: domains, DefaultRole: role, Label: "Sign in with Test IdP"}, box)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = web.New(st, client, web.Config{SSO: c}, logger)
	srv.Start()
	t.Cleanup(srv.Close)
	return ssoEnv{st: st, url: base, op: op, log: logs}
}

// signIn runs single sign-on in a fresh browser that wants next, as the
// provider's current user; edit, if set, changes the authorization URL
// before the browser follows it. It returns the status, Location and page
// of Reach's answer to the callback, and the session cookie it set.
func (e ssoEnv) signIn(t *testing.T, next string, edit func(q url.Values)) (int, string, string, *http.Cookie) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	reach, _ := url.Parse(e.url)
	b := &http.Client{Jar: jar, CheckRedirect: func(_ *http.Request, via []*http.Request) error {
		if via[len(via)-1].URL.Host == reach.Host { // Reach's callback answered: show that answer
			return http.ErrUseLastResponse
		}
		return nil
	}}
	first := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := first.Get(e.url + "/login/oidc?next=" + url.QueryEscape(next))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("GET /login/oidc: HTTP %d", resp.StatusCode)
	}
	auth, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(auth.String(), e.op.Issuer) {
		t.Fatalf("GET /login/oidc: redirected to %q, want the provider", resp.Header.Get("Location"))
	}
	q := auth.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") == "" || q.Get("state") == "" {
		t.Fatalf("authorization request without PKCE S256, nonce or state: %v", q)
	}
	if edit != nil {
		edit(q)
		auth.RawQuery = q.Encode()
	}
	resp, err = b.Get(auth.String()) // provider, its login page, back to Reach's callback
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(resp.Request.URL.Path, "/login/oidc/callback") {
		t.Fatalf("the browser ended at %s (HTTP %d), not at Reach's callback: %.300s", resp.Request.URL, resp.StatusCode, page)
	}
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "reach_session" && c.Value != "" {
			session = c
		}
	}
	return resp.StatusCode, resp.Header.Get("Location"), string(page), session
}

// pageAs is the status and body of GET path with a session cookie.
func (e ssoEnv) pageAs(t *testing.T, path string, c *http.Cookie) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.url+path, nil)
	req.AddCookie(c)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A first sign-in with a verified email of an allowed domain creates an
// account without a password, with the default role in the default
// project, and a working session; it ends at the page asked for, and only
// at a local one. The sign-in page offers the button.
func TestOIDCCreatesAccount(t *testing.T) {
	e := newSSO(t, []string{"Lab.test"}, "editor")
	if code, page := get(t, e.url+"/login"); code != 200 || !strings.Contains(page, `href="/login/oidc"`) || !strings.Contains(page, "Sign in with Test IdP") {
		t.Fatalf("sign-in page: HTTP %d, want the SSO button", code)
	}
	e.op.SetUser(ssotest.User{Email: "New.Person@lab.test", EmailVerified: true})
	code, loc, page, session := e.signIn(t, "/projects", nil)
	if code != 303 || loc != "/projects" || session == nil {
		t.Fatalf("callback: HTTP %d to %q, session %v: %.300s", code, loc, session != nil, page)
	}
	if !session.HttpOnly || session.SameSite != http.SameSiteLaxMode {
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Lax (as password sign-in sets it)", session)
	}
	if code, page := e.pageAs(t, "/account/password", session); code != 200 || !strings.Contains(page, "new.person@lab.test") {
		t.Errorf("account page with the SSO session: HTTP %d", code)
	}
	ctx := context.Background()
	u, err := e.st.UserByEmail(ctx, "new.person@lab.test")
	if err != nil {
		t.Fatal(err)
	}
	if u.PasswordHash != "" || u.IsAdmin {
		t.Errorf("created account: password %q, admin %v; want none, not an admin", u.PasswordHash, u.IsAdmin)
	}
	def, _ := e.st.DefaultProjectID(ctx)
	if role, err := e.st.RoleIn(ctx, def, u.ID); err != nil || role != "editor" {
		t.Errorf("role in the default project: %q, %v; want editor", role, err)
	}
	// Again, with a next that leaves the site: the same account, at "/".
	code, loc, _, session = e.signIn(t, "//evil.example/x", nil)
	if code != 303 || loc != "/" || session == nil {
		t.Errorf("second sign-in: HTTP %d to %q, want 303 to /", code, loc)
	}
	if n, _ := e.st.CountUsers(ctx); n != 1 {
		t.Errorf("%d accounts after two sign-ins of one person, want 1", n)
	}
	// Sign-out ends the Reach session.
	req, _ := http.NewRequest("POST", e.url+"/logout", nil)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(session)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if code, _ := e.pageAs(t, "/projects", session); code != 303 {
		t.Errorf("after sign-out the session still opens /projects: HTTP %d", code)
	}
}

// An existing local account is matched by verified email (any case),
// whatever the domain policy (none here), and its password still signs in.
func TestOIDCMatchesLocalAccount(t *testing.T) {
	e := newSSO(t, nil, "")
	u := createUser(t, e.st, "Alice@Other.test", false, "viewer")
	e.op.SetUser(ssotest.User{Email: "ALICE@other.test", EmailVerified: true})
	code, loc, page, session := e.signIn(t, "/", nil)
	if code != 303 || loc != "/" || session == nil {
		t.Fatalf("callback: HTTP %d to %q: %.300s", code, loc, page)
	}
	if code, page := e.pageAs(t, "/account/password", session); code != 200 || !strings.Contains(page, u.Email) {
		t.Errorf("account page with the SSO session: HTTP %d, want %s's", code, u.Email)
	}
	if n, _ := e.st.CountUsers(context.Background()); n != 1 {
		t.Errorf("%d accounts, want the one local account", n)
	}
	if c := login(t, e.url, "alice@other.test", testPassword); c == nil {
		t.Error("password sign-in fails with SSO configured")
	}
}

// Every refusal: no session, no account made, the page says why.
func TestOIDCRefusals(t *testing.T) {
	e := newSSO(t, []string{"lab.test"}, "viewer")
	disabled := createUser(t, e.st, "gone@lab.test", false, "viewer")
	if err := e.st.SetDisabled(context.Background(), disabled.ID, true); err != nil {
		t.Fatal(err)
	}
	verified := ssotest.User{Email: "someone@lab.test", EmailVerified: true}
	cases := []struct {
		name   string
		user   ssotest.User
		tamper func(tok map[string]any)
		edit   func(q url.Values)
		status int
		says   string
		logged string // the cause in Reach's log
	}{
		{name: "unverified email", user: ssotest.User{Email: "unverified@lab.test"}, status: 403, says: "not verified at the sign-in provider", logged: "the email is not verified at the provider"},
		{name: "domain not allowed", user: ssotest.User{Email: "bob@elsewhere.test", EmailVerified: true}, status: 403,
			says:   "Accounts from elsewhere.test are not created here: ask an admin for an invitation.",
			logged: "domain not allowed"},
		{name: "disabled account", user: ssotest.User{Email: "gone@lab.test", EmailVerified: true}, status: 403, says: "This account is disabled", logged: "account disabled"},
		{name: "tampered ID token", user: verified, status: 401, says: "could not be verified", logged: "failed to verify signature",
			tamper: func(tok map[string]any) {
				tok["id_token"] = ssotest.WithClaims(tok["id_token"].(string), func(c map[string]any) { c["email"] = "admin@lab.test" })
			}},
		{name: "tampered signature", user: verified, status: 401, says: "could not be verified", logged: "failed to verify signature",
			tamper: func(tok map[string]any) {
				// One character of the signature changed (to another one:
				// replacing it by itself left the token valid, 1 run in 64).
				raw := tok["id_token"].(string)
				at, other := len(raw)-4, "A"
				if raw[at] == 'A' {
					other = "B"
				}
				tok["id_token"] = raw[:at] + other + raw[at+1:]
			}},
		{name: "wrong nonce", user: verified, status: 401, says: "could not be verified", logged: "the ID token was issued for another sign-in",
			edit: func(q url.Values) { q.Set("nonce", "another-sign-in") }},
		{name: "wrong audience", user: verified, status: 401, says: "could not be verified", logged: `expected audience \"reach\" got [\"other-app\"]`,
			tamper: func(tok map[string]any) {
				nonce, _ := ssotest.Claims(tok["id_token"].(string))["nonce"].(string)
				other, err := e.op.IDToken("other-app", "other-secret", "http://other.test/callback", nonce)
				if err != nil {
					t.Errorf("token for the other client: %v", err)
					return
				}
				tok["id_token"] = other
			}},
		{name: "mismatched state", user: verified, status: 400, says: "was not started in this browser", logged: "the state differs",
			edit: func(q url.Values) { q.Set("state", "forged") }},
		{name: "PKCE verifier not matching", user: verified, status: 401, says: "could not be verified", logged: "invalid code_verifier",
			edit: func(q url.Values) { q.Set("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM") }},
	}
	e.log.take()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.op.SetUser(c.user)
			e.op.Tamper(c.tamper)
			defer e.op.Tamper(nil)
			code, _, page, session := e.signIn(t, "/", c.edit)
			if code != c.status || session != nil || !strings.Contains(page, c.says) {
				t.Errorf("HTTP %d, session %v, want %d and a page saying %q: %.400s", code, session != nil, c.status, c.says, page)
			}
			logged := e.log.take()
			if !strings.Contains(logged, c.logged) {
				t.Errorf("Reach's log does not give the cause %q:\n%s", c.logged, logged)
			}
			if strings.Contains(logged, "eyJ") {
				t.Errorf("Reach's log shows a token:\n%s", logged)
			}
			if _, err := e.st.UserByEmail(context.Background(), c.user.Email); c.user.Email != "gone@lab.test" && err == nil {
				t.Errorf("an account for %s was created", c.user.Email)
			}
		})
	}
	// A callback without the flow cookie (another browser, or forged).
	if code, page := get(t, e.url+"/login/oidc/callback?state=x&code=y"); code != 400 || !strings.Contains(page, "was not started in this browser") {
		t.Errorf("callback without the flow cookie: HTTP %d: %.300s", code, page)
	}
	// The control: the same provider and user do sign in untouched.
	e.op.SetUser(verified)
	if code, _, page, session := e.signIn(t, "/", nil); code != 303 || session == nil {
		t.Errorf("untouched sign-in: HTTP %d: %.300s", code, page)
	}
}

// Without SSO configured, the sign-in page has no button.
func TestOIDCNotConfigured(t *testing.T) {
	srv := newServer(t)
	if code, page := get(t, srv.url+"/login"); code != 200 || strings.Contains(page, "/login/oidc") {
		t.Errorf("sign-in page without SSO: HTTP %d, shows the SSO button: %v", code, strings.Contains(page, "/login/oidc"))
	}
}

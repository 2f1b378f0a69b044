package web_test

// Test accounts: every page and API route needs a signed-in user, so tests
// that drive the app create one and sign it in, as a browser tab (session
// cookie, through the sign-in form) or as an HTTP client (session cookie
// and API token).

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/auth"
	"github.com/reach-lab/reach/internal/store"
)

const testPassword = "correct horse battery staple"

// account is a test user, signed in: Cookie is its session (what a browser
// holds), Token an API token for Authorization: Bearer.
type account struct {
	ID     int64
	Email  string
	Cookie *http.Cookie
	Token  string
}

// createUser makes an account with testPassword: an admin, or a member of
// the default project with role ("" for none).
func createUser(t *testing.T, st *store.Store, email string, admin bool, role string) store.User {
	t.Helper()
	ctx := context.Background()
	hash, err := auth.HashPassword(testPassword, auth.DefaultParams)
	if err != nil {
		t.Fatal(err)
	}
	u, err := st.CreateUser(ctx, email, hash, admin, false)
	if err != nil {
		t.Fatal(err)
	}
	if role != "" {
		def, err := st.DefaultProjectID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetMember(ctx, def, u.ID, role); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// newAccount creates a user (see createUser), signs it in against the
// server at baseURL with POST /login and gives it an API token.
func newAccount(t *testing.T, st *store.Store, baseURL, email string, admin bool, role string) account {
	t.Helper()
	u := createUser(t, st, email, admin, role)
	a := account{ID: u.ID, Email: u.Email, Cookie: login(t, baseURL, email, testPassword)}
	token, hash, err := auth.NewToken(auth.PrefixAPI)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateAPIToken(context.Background(), u.ID, "test", token[:10], hash); err != nil {
		t.Fatal(err)
	}
	a.Token = token
	return a
}

// noRedirect is an HTTP client that shows redirects instead of following them.
var noRedirect = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       60 * time.Second,
}

// login posts the sign-in form and returns the session cookie.
func login(t *testing.T, baseURL, email, password string) *http.Cookie {
	t.Helper()
	resp, err := noRedirect.PostForm(baseURL+"/login", url.Values{"email": {email}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in as %s: HTTP %d, want 303", email, resp.StatusCode)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "reach_session" && c.Value != "" {
			return c
		}
	}
	t.Fatalf("sign in as %s: no session cookie", email)
	return nil
}

// signInTab creates an admin account named email and signs the Chromium
// tab ctx in through the sign-in form, as a person would.
func signInTab(t *testing.T, ctx context.Context, st *store.Store, baseURL, email string) {
	t.Helper()
	createUser(t, st, email, true, "")
	if _, err := chromedp.Run(ctx, chromedp.NavigateResponse(baseURL+"/login")); err != nil {
		t.Fatalf("open the sign-in page: %v", err)
	}
	fill := fmt.Sprintf(`(() => {
		const f = document.querySelector("#login-form");
		f.querySelector("input[name=email]").value = %q;
		f.querySelector("input[name=password]").value = %q;
		f.querySelector("button[type=submit]").click();
		return true;
	})()`, email, testPassword)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fill)); err != nil {
		t.Fatalf("fill in the sign-in form: %v", err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		here, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState === "complete" ? location.pathname + "|" + (document.querySelector("#who") || {}).textContent : ""`))
		if err == nil && strings.HasPrefix(here, "/|") && strings.HasSuffix(here, "|"+email) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("signing in as %s: the tab shows %q (%v)", email, here, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// signIn signs this tab in as a new admin (admin@reach.test unless an
// email is given).
func (b *browser) signIn(t *testing.T, a *app, email ...string) {
	t.Helper()
	e := "admin@reach.test"
	if len(email) > 0 {
		e = email[0]
	}
	signInTab(t, b.ctx, a.st, a.url, e)
}

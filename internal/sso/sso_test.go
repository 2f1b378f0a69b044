package sso_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/sso"
	"github.com/reach-lab/reach/internal/ssotest"
)

const redirect = "http://reach.test/login/oidc/callback"

// newClient is an SSO client of a fresh provider, as client "reach".
func newClient(t *testing.T, phrase string) (*sso.Client, *ssotest.Provider) {
	t.Helper()
	op := ssotest.Start(t)
	op.AddClient("reach", "s3cret", redirect)
	box, err := secret.New(phrase)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sso.New(sso.Config{Issuer: op.Issuer, ClientID: "reach", ClientSecret: "s3cret", RedirectURL: redirect}, box)
	if err != nil {
		t.Fatal(err)
	}
	return c, op
}

// authorize follows authURL through the provider's login as its current
// user, and returns the callback's query.
func authorize(t *testing.T, authURL string) url.Values {
	t.Helper()
	hc := &http.Client{Jar: newJar(), CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(r.URL.String(), redirect) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := hc.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), redirect) {
		t.Fatalf("authorization ended at HTTP %d, %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc.Query()
}

// A provider that keeps the email out of ID tokens: it is read from
// userinfo, for the token's subject, and must be verified there too.
func TestFinishEmailFromUserinfo(t *testing.T) {
	c, op := newClient(t, "one")
	op.EmailInUserinfoOnly("reach")
	ctx := context.Background()
	for _, verified := range []bool{true, false} {
		op.SetUser(ssotest.User{Email: "Ann@Lab.test", EmailVerified: verified})
		authURL, cookie, err := c.Start(ctx, "/comparisons/3")
		if err != nil {
			t.Fatal(err)
		}
		id, next, err := c.Finish(ctx, cookie, sso.CallbackFrom(authorize(t, authURL)))
		if verified && (err != nil || id.Email != "ann@lab.test" || id.Subject == "" || next != "/comparisons/3") {
			t.Errorf("verified: %+v, %q, %v", id, next, err)
		}
		if !verified && !errors.Is(err, sso.ErrEmailNotVerified) {
			t.Errorf("unverified: %v, want ErrEmailNotVerified", err)
		}
	}
}

// The flow cookie is sealed: altered, sealed under another server secret,
// or missing, it is refused before anything is sent to the provider; a
// code is good once; a provider's error is refused.
func TestFinishRefusals(t *testing.T) {
	c, op := newClient(t, "one")
	other, _ := newClient(t, "two")
	op.SetUser(ssotest.User{Email: "ann@lab.test", EmailVerified: true})
	ctx := context.Background()
	authURL, cookie, err := c.Start(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	q := authorize(t, authURL)
	altered := []byte(cookie)
	altered[len(altered)/2] ^= 1
	_, otherCookie, err := other.Start(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	for name, ck := range map[string]string{"altered": string(altered), "another secret": otherCookie, "missing": ""} {
		if _, _, err := c.Finish(ctx, ck, sso.CallbackFrom(q)); !errors.Is(err, sso.ErrState) {
			t.Errorf("%s flow cookie: %v, want ErrState", name, err)
		}
	}
	if _, _, err := c.Finish(ctx, cookie, sso.CallbackFrom(q)); err != nil {
		t.Fatalf("the genuine callback: %v", err)
	}
	if _, _, err := c.Finish(ctx, cookie, sso.CallbackFrom(q)); !errors.Is(err, sso.ErrExchange) {
		t.Errorf("the code again: %v, want ErrExchange", err)
	}
	denied := sso.Callback{State: q.Get("state"), Error: "access_denied"}
	if _, _, err := c.Finish(ctx, cookie, denied); !errors.Is(err, sso.ErrProvider) {
		t.Errorf("provider error: %v, want ErrProvider", err)
	}
}

// A provider that cannot be reached fails Start, and is asked again next
// time (discovery is not cached on failure).
func TestStartProviderDown(t *testing.T) {
	box, _ := secret.New("x")
	c, err := sso.New(sso.Config{Issuer: "http://127.0.0.1:9", ClientID: "reach", RedirectURL: redirect}, box)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Start(context.Background(), "/"); err == nil {
		t.Error("Start with the provider down: no error")
	}
}

// New refuses incomplete settings and unknown roles; MayCreate matches
// domains exactly.
func TestNewAndMayCreate(t *testing.T) {
	box, _ := secret.New("x")
	ok := sso.Config{Issuer: "https://id.example", ClientID: "reach", RedirectURL: redirect, AllowedDomains: []string{"@Lab.test"}}
	for name, f := range map[string]func(*sso.Config){
		"no issuer": func(c *sso.Config) { c.Issuer = "" }, "no client": func(c *sso.Config) { c.ClientID = "" },
		"bad redirect": func(c *sso.Config) { c.RedirectURL = "/cb" }, "admin role": func(c *sso.Config) { c.DefaultRole = "admin" },
	} {
		cfg := ok
		f(&cfg)
		if _, err := sso.New(cfg, box); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c, err := sso.New(ok, box)
	if err != nil {
		t.Fatal(err)
	}
	for email, want := range map[string]bool{"a@lab.test": true, "a@LAB.TEST": true, "a@sub.lab.test": false, "a@lab.test.evil": false, "lab.test": false} {
		if c.MayCreate(email) != want {
			t.Errorf("MayCreate(%q) = %v", email, !want)
		}
	}
}

func newJar() http.CookieJar {
	j, _ := cookiejar.New(nil)
	return j
}

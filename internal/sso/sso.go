// Package sso signs people in with an OpenID Connect provider: the
// authorization code flow with PKCE (S256), state and nonce, and an ID
// token verified by coreos/go-oidc (signature, issuer, audience, expiry).
// It says who the provider vouches for (a verified email); which account
// that is, and whether one may be created, is the caller's business, with
// MayCreate and DefaultRole as the admin's settings.
package sso

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// FlowTTL is how long a sign-in started at the provider may take.
const FlowTTL = 10 * time.Minute

// sealPurpose binds sealed flow cookies to this use of the server secret.
const sealPurpose = "sso flow"

// Config is the provider and the account policy.
type Config struct {
	// Issuer is the provider's issuer URL; its discovery document is at
	// Issuer + "/.well-known/openid-configuration".
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURL is Reach's callback as registered at the provider:
	// https://reach.example.org/login/oidc/callback.
	RedirectURL string
	// AllowedDomains are the email domains whose people get an account on
	// their first sign-in ("example.org"); empty: nobody does, only
	// existing accounts sign in.
	AllowedDomains []string
	// DefaultRole is the role in the default project of an account created
	// here: viewer (when empty), editor or owner.
	DefaultRole string
	// Label is the sign-in button's text; empty: "Sign in with SSO".
	Label string
	// HTTPClient talks to the provider; nil: a client with a 15 s timeout.
	HTTPClient *http.Client
}

// Sealer encrypts and authenticates the flow cookie (secret.Box).
type Sealer interface {
	Seal(plain []byte, purpose string) ([]byte, error)
	Open(sealed []byte, purpose string) ([]byte, error)
}

// Client runs sign-ins against one provider. The provider's discovery
// document is read on first use (and again after a failure), so Reach
// starts while the provider is down.
type Client struct {
	cfg  Config
	seal Sealer
	http *http.Client

	mu       sync.Mutex
	oauth    *oauth2.Config
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier
}

// Refusals of Finish; each wraps the detail, which never holds a token.
var (
	// ErrState: no flow cookie, an expired or altered one, or a state that
	// is not the one this browser started with.
	ErrState = errors.New("the sign-in was not started in this browser, or took too long")
	// ErrProvider: the provider answered the callback with an error.
	ErrProvider = errors.New("the provider refused the sign-in")
	// ErrExchange: the provider did not give tokens for the code.
	ErrExchange = errors.New("the provider did not exchange the code")
	// ErrIDToken: missing ID token, or one that fails verification
	// (signature, issuer, audience, expiry).
	ErrIDToken = errors.New("the ID token is not valid")
	// ErrNonce: the ID token was issued for another sign-in.
	ErrNonce = errors.New("the ID token was issued for another sign-in")
	// ErrNoEmail: the provider gave no email.
	ErrNoEmail = errors.New("the provider gave no email")
	// ErrEmailNotVerified: email_verified is false or missing.
	ErrEmailNotVerified = errors.New("the email is not verified at the provider")
)

// Identity is whom the provider vouches for.
type Identity struct {
	Subject string // the provider's user id
	Email   string // verified; lower-case
}

// New checks cfg and returns a client; seal protects the flow cookie.
func New(cfg Config, seal Sealer) (*Client, error) {
	if cfg.Issuer == "" || cfg.ClientID == "" || cfg.RedirectURL == "" {
		return nil, errors.New("sso: the issuer, client id and redirect URL are required")
	}
	if u, err := url.Parse(cfg.RedirectURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("sso: redirect URL %q is not an http(s) URL", cfg.RedirectURL)
	}
	if seal == nil {
		return nil, errors.New("sso: no sealer for the flow cookie")
	}
	switch cfg.DefaultRole {
	case "":
		cfg.DefaultRole = "viewer"
	case "viewer", "editor", "owner":
	default:
		return nil, fmt.Errorf("sso: default role %q: want viewer, editor or owner", cfg.DefaultRole)
	}
	var domains []string
	for _, d := range cfg.AllowedDomains {
		d = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(d)), "@")
		if d != "" {
			domains = append(domains, d)
		}
	}
	cfg.AllowedDomains = domains
	if cfg.Label == "" {
		cfg.Label = "Sign in with SSO"
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 15 * time.Second}
	}
	return &Client{cfg: cfg, seal: seal, http: hc}, nil
}

// Label is the sign-in button's text.
func (c *Client) Label() string { return c.cfg.Label }

// DefaultRole is the default-project role of accounts created here.
func (c *Client) DefaultRole() string { return c.cfg.DefaultRole }

// MayCreate reports whether a first sign-in with this (verified) email
// creates an account: its domain is one of AllowedDomains, exactly
// (sub.example.org is not example.org).
func (c *Client) MayCreate(email string) bool {
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return false
	}
	domain := strings.ToLower(email[at+1:])
	for _, d := range c.cfg.AllowedDomains {
		if d == domain {
			return true
		}
	}
	return false
}

// Domain is the part of an email after the last "@".
func Domain(email string) string { return email[strings.LastIndexByte(email, '@')+1:] }

func (c *Client) ctx(ctx context.Context) context.Context { return oidc.ClientContext(ctx, c.http) }

// discover reads the provider's discovery document once it succeeds.
func (c *Client) discover(ctx context.Context) (*oauth2.Config, *oidc.Provider, *oidc.IDTokenVerifier, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.provider == nil {
		p, err := oidc.NewProvider(c.ctx(ctx), c.cfg.Issuer)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("sso: discover %s: %w", c.cfg.Issuer, err)
		}
		c.provider = p
		c.verifier = p.Verifier(&oidc.Config{ClientID: c.cfg.ClientID})
		c.oauth = &oauth2.Config{ClientID: c.cfg.ClientID, ClientSecret: c.cfg.ClientSecret, RedirectURL: c.cfg.RedirectURL,
			Endpoint: p.Endpoint(), Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
	}
	return c.oauth, c.provider, c.verifier, nil
}

// flow is what the browser keeps, sealed, between Start and Finish.
type flow struct {
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"`
	Next     string    `json:"x"`
	Expires  time.Time `json:"e"`
}

func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Start begins a sign-in that should end at next (a local path, checked
// by the caller). It returns the provider's authorization URL to send the
// browser to, and the sealed flow to keep in a cookie until the callback.
func (c *Client) Start(ctx context.Context, next string) (authURL, cookie string, err error) {
	oc, _, _, err := c.discover(ctx)
	if err != nil {
		return "", "", err
	}
	f := flow{State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier(), Next: next, Expires: time.Now().Add(FlowTTL)}
	plain, err := json.Marshal(f)
	if err != nil {
		return "", "", fmt.Errorf("sso: %w", err)
	}
	sealed, err := c.seal.Seal(plain, sealPurpose)
	if err != nil {
		return "", "", fmt.Errorf("sso: seal the flow: %w", err)
	}
	u := oc.AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier))
	return u, base64.RawURLEncoding.EncodeToString(sealed), nil
}

// Callback is what the provider sent back to the redirect URL.
type Callback struct {
	State, Code string
	// Error is the provider's error code ("access_denied"), if any.
	Error string
}

// CallbackFrom reads the callback's query.
func CallbackFrom(q url.Values) Callback {
	return Callback{State: q.Get("state"), Code: q.Get("code"), Error: q.Get("error")}
}

// Finish ends a sign-in: the flow cookie's state must be the callback's,
// the code is exchanged with the PKCE verifier, and the ID token must be
// valid, carry the flow's nonce, and vouch for a verified email (from the
// token, or else from the userinfo endpoint for the same subject). It
// returns the identity and the path the sign-in should end at; errors wrap
// one of the Err values.
func (c *Client) Finish(ctx context.Context, cookie string, cb Callback) (Identity, string, error) {
	f, err := c.openFlow(cookie)
	if err != nil {
		return Identity{}, "", err
	}
	if cb.State == "" || cb.State != f.State {
		return Identity{}, "", fmt.Errorf("%w: the state differs", ErrState)
	}
	if cb.Error != "" {
		return Identity{}, f.Next, fmt.Errorf("%w: %.100s", ErrProvider, cb.Error)
	}
	oc, p, v, err := c.discover(ctx)
	if err != nil {
		return Identity{}, f.Next, err
	}
	tok, err := oc.Exchange(c.ctx(ctx), cb.Code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		return Identity{}, f.Next, fmt.Errorf("%w: %w", ErrExchange, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Identity{}, f.Next, fmt.Errorf("%w: the token response has none", ErrIDToken)
	}
	idt, err := v.Verify(c.ctx(ctx), raw)
	if err != nil {
		return Identity{}, f.Next, fmt.Errorf("%w: %w", ErrIDToken, err)
	}
	if idt.Nonce != f.Nonce {
		return Identity{}, f.Next, ErrNonce
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified any    `json:"email_verified"`
	}
	if err := idt.Claims(&claims); err != nil {
		return Identity{}, f.Next, fmt.Errorf("%w: %w", ErrIDToken, err)
	}
	email, verified := claims.Email, isTrue(claims.EmailVerified)
	if email == "" {
		// Some providers (ZITADEL by default) leave the email to userinfo.
		ui, err := p.UserInfo(c.ctx(ctx), oauth2.StaticTokenSource(tok))
		if err != nil {
			return Identity{}, f.Next, fmt.Errorf("%w: userinfo: %w", ErrNoEmail, err)
		}
		if ui.Subject != idt.Subject {
			return Identity{}, f.Next, fmt.Errorf("%w: userinfo is about another subject", ErrNoEmail)
		}
		email, verified = ui.Email, ui.EmailVerified
	}
	email = strings.ToLower(strings.TrimSpace(email))
	if email == "" || !strings.Contains(email, "@") {
		return Identity{}, f.Next, ErrNoEmail
	}
	if !verified {
		return Identity{Subject: idt.Subject, Email: email}, f.Next, ErrEmailNotVerified
	}
	return Identity{Subject: idt.Subject, Email: email}, f.Next, nil
}

// isTrue reads email_verified: true, or "true" (some providers send a
// string); anything else, or nothing, is not verified.
func isTrue(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return strings.EqualFold(x, "true")
	}
	return false
}

func (c *Client) openFlow(cookie string) (flow, error) {
	var f flow
	if cookie == "" {
		return f, fmt.Errorf("%w: no flow cookie", ErrState)
	}
	sealed, err := base64.RawURLEncoding.DecodeString(cookie)
	if err != nil {
		return f, fmt.Errorf("%w: %w", ErrState, err)
	}
	plain, err := c.seal.Open(sealed, sealPurpose)
	if err != nil {
		return f, fmt.Errorf("%w: %w", ErrState, err)
	}
	if err := json.Unmarshal(plain, &f); err != nil {
		return f, fmt.Errorf("%w: %w", ErrState, err)
	}
	if time.Now().After(f.Expires) {
		return f, fmt.Errorf("%w: the flow expired", ErrState)
	}
	return f, nil
}

// Package ssotest starts a real OpenID provider for tests: zitadel/oidc's
// op package on an httptest server, with the in-memory storage of
// zitadel/oidc's example server. Its login page signs in whoever the test
// chose with SetUser, at once; Tamper alters the token endpoint's answer
// in flight, to test what Reach does with tokens it must refuse.
package ssotest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// User is an account at the provider; its username is its email.
type User struct {
	Email         string
	EmailVerified bool
}

// Provider is a running OpenID provider.
type Provider struct {
	// Issuer is the provider's issuer URL (http://127.0.0.1:port).
	Issuer string

	op      *op.Provider
	storage *storage.Storage
	clients map[string]*storage.Client

	mu           sync.Mutex
	userinfoOnly map[string]bool // clients whose ID tokens carry no email
	users        map[string]*storage.User
	user         string // who the login page signs in
	tamper       func(token map[string]any)
}

// Start runs a provider until the test ends.
func Start(t testing.TB) *Provider {
	t.Helper()
	p := &Provider{clients: map[string]*storage.Client{}, users: map[string]*storage.User{}, userinfoOnly: map[string]bool{}}
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	p.Issuer = srv.URL
	p.storage = storage.NewStorageWithClients(userStore{p}, p.clients)
	var key [32]byte
	_, _ = rand.Read(key[:])
	prov, err := op.NewProvider(&op.Config{CryptoKey: key, CodeMethodS256: true, AuthMethodPost: true},
		clientStorage{p.storage, p}, op.StaticIssuer(p.Issuer), op.WithAllowInsecure())
	if err != nil {
		t.Fatal(err)
	}
	p.op = prov
	mux := http.NewServeMux()
	login := op.NewIssuerInterceptor(prov.IssuerFromRequest).HandlerFunc(p.login)
	mux.HandleFunc("/login/username", login)
	mux.HandleFunc(prov.TokenEndpoint().Relative(), p.token)
	mux.Handle("/", prov)
	h = mux
	return p
}

// AddClient registers a confidential web client.
func (p *Provider) AddClient(id, secret, redirectURI string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clients[id] = storage.WebClient(id, secret, redirectURI)
}

// EmailInUserinfoOnly leaves the email out of the client's ID tokens: it
// is at the userinfo endpoint only (ZITADEL's default).
func (p *Provider) EmailInUserinfoOnly(clientID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.userinfoOnly[clientID] = true
}

// SetUser makes u the one the login page signs in (adding u if new).
func (p *Provider) SetUser(u User) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.users[u.Email] = &storage.User{ID: u.Email, Username: u.Email, Password: "pw", Email: u.Email, EmailVerified: u.EmailVerified,
		FirstName: "Test", LastName: "User"}
	p.user = u.Email
}

// Tamper makes the token endpoint pass its next JSON answer through f
// before it leaves (nil: untouched); later answers are untouched.
func (p *Provider) Tamper(f func(token map[string]any)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tamper = f
}

// login is the provider's login page: it signs in the chosen user.
func (p *Provider) login(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	user := p.user
	p.mu.Unlock()
	id := r.URL.Query().Get("authRequestID")
	if err := p.storage.CheckUsernamePassword(user, "pw", id); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	http.Redirect(w, r, op.AuthCallbackURL(p.op)(r.Context(), id), http.StatusFound)
}

// token is the provider's token endpoint, through the test's tamper.
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	f := p.tamper
	p.tamper = nil
	p.mu.Unlock()
	if f == nil {
		p.op.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	p.op.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	var tok map[string]any
	if rec.Code == http.StatusOK && json.Unmarshal(body, &tok) == nil {
		f(tok)
		body, _ = json.Marshal(tok)
	}
	for k, v := range rec.Header() {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

// IDToken runs a whole code flow for another client (registered with
// AddClient) as the current user, with the given nonce, and returns the
// ID token the provider issued: a genuine token for another audience.
func (p *Provider) IDToken(clientID, secret, redirectURI, nonce string) (string, error) {
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(r.URL.String(), redirectURI) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	q := url.Values{"client_id": {clientID}, "redirect_uri": {redirectURI}, "response_type": {"code"},
		"scope": {"openid email"}, "state": {"s"}, "nonce": {nonce}}
	resp, err := hc.Get(p.Issuer + p.op.AuthorizationEndpoint().Relative() + "?" + q.Encode())
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		return "", fmt.Errorf("authorize: HTTP %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirectURI}}
	req, _ := http.NewRequest("POST", p.Issuer+p.op.TokenEndpoint().Relative(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var tok struct {
		IDToken string `json:"id_token"`
	}
	if err := json.Unmarshal(b, &tok); err != nil || tok.IDToken == "" {
		return "", fmt.Errorf("token: HTTP %d: %s", resp.StatusCode, b)
	}
	return tok.IDToken, nil
}

// Claims decodes an ID token's payload without checking it.
func Claims(idToken string) map[string]any {
	parts := strings.Split(idToken, ".")
	if len(parts) != 3 {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// WithClaims returns idToken with its payload changed by f and its
// signature kept: a forged token.
func WithClaims(idToken string, f func(map[string]any)) string {
	parts := strings.Split(idToken, ".")
	m := Claims(idToken)
	f(m)
	b, _ := json.Marshal(m)
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(b) + "." + parts[2]
}

// userStore is the example storage's view of the test's users.
type userStore struct{ p *Provider }

func (u userStore) GetUserByID(id string) *storage.User {
	u.p.mu.Lock()
	defer u.p.mu.Unlock()
	return u.p.users[id]
}

func (u userStore) GetUserByUsername(name string) *storage.User { return u.GetUserByID(name) }

func (userStore) ExampleClientID() string { return "service" }

// clientStorage puts the user's claims (email, email_verified) into ID
// tokens, as most providers do (the example's clients leave them to the
// userinfo endpoint), but for EmailInUserinfoOnly's clients.
type clientStorage struct {
	*storage.Storage
	p *Provider
}

func (s clientStorage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	if s.p.userinfoOnly[id] {
		return c, nil
	}
	return claimsInIDToken{c}, nil
}

type claimsInIDToken struct{ op.Client }

func (claimsInIDToken) IDTokenUserinfoClaimsAssertion() bool { return true }

package web_test

// Tests of issue 10 ("Hardening"): each fails on the code before the fix.

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// After sign-in, ?next= may only name a clean path of this site: browsers
// drop tabs and newlines and read "\" as "/", so each of these would
// otherwise land on evil.example.
func TestLoginNextStaysOnSite(t *testing.T) {
	srv := newServer(t)
	createUser(t, srv.st, "u@reach.test", false, "")
	cookie := login(t, srv.url, "u@reach.test", testPassword)
	evil := []string{
		"/%09/evil.example/", "/%0a/evil.example/", "/%0d%0a/evil.example", "%2F%2Fevil.example", "//evil.example",
		"/%5Cevil.example", "%5C%5Cevil.example", "/%5C/evil.example", "https://evil.example/", "http:evil.example",
		"javascript:alert(1)", "/%20/evil.example", "%09//evil.example", "/%00/evil.example", "/%7F/evil.example",
		"https:/evil.example", "/%2F%2Fevil.example",
	}
	for _, raw := range evil {
		// Already signed in: /login redirects straight to next.
		code, loc := redirectOf(t, srv.url+"/login?next="+raw, cookie)
		if code != 303 || loc != "/" {
			t.Errorf("GET /login?next=%s signed in: HTTP %d to %q, want 303 to /", raw, code, loc)
		}
		next, err := url.QueryUnescape(raw)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("POST", srv.url+"/login", strings.NewReader(url.Values{"email": {"u@reach.test"},
			"password": {testPassword}, "next": {next}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		code, loc = roundTrip(t, req)
		if code != 303 || loc != "/" {
			t.Errorf("POST /login next=%q: HTTP %d to %q, want 303 to /", next, code, loc)
		}
	}
	for _, good := range []string{"/comparisons/3?pair=2", "/projects/1", "/comparisons/3/problems/7#review"} {
		code, loc := redirectOf(t, srv.url+"/login?next="+url.QueryEscape(good), cookie)
		if code != 303 || loc != strings.Split(good, "#")[0] && loc != good {
			t.Errorf("next=%q: HTTP %d to %q, want it kept", good, code, loc)
		}
	}
}

// redirectOf sends GET url with cookie c (if any) and returns the status
// and Location.
func redirectOf(t *testing.T, u string, c *http.Cookie) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c != nil {
		req.AddCookie(c)
	}
	return roundTrip(t, req)
}

// roundTrip sends req without any client logic (a client would refuse to
// parse a Location with a tab in it; a browser strips the tab and follows)
// and returns the status and the raw Location.
func roundTrip(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

package main

import (
	"flag"
	"io"
	"testing"

	"github.com/reach-lab/reach/internal/secret"
)

// The SSO flags: none means no SSO; the redirect URL defaults to the base
// URL's callback and is required one way or the other; the role is checked.
func TestSSOFlags(t *testing.T) {
	box, err := secret.New("flags")
	if err != nil {
		t.Fatal(err)
	}
	parse := func(args ...string) ssoFlags {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := addSSOFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if c, err := parse().client("https://reach.example.org", box); c != nil || err != nil {
		t.Errorf("no issuer: %v, %v; want no SSO", c, err)
	}
	c, err := parse("-oidc-issuer", "https://id.example.org", "-oidc-client-id", "reach", "-oidc-domains", " lab.example, ,Other.example ").
		client("https://reach.example.org/", box)
	if err != nil || c == nil {
		t.Fatalf("configured: %v", err)
	}
	if !c.MayCreate("a@lab.example") || !c.MayCreate("b@other.example") || c.MayCreate("c@sub.lab.example") || c.DefaultRole() != "viewer" ||
		c.Label() != "Sign in with SSO" {
		t.Errorf("domains, role or label not as given")
	}
	if _, err := parse("-oidc-issuer", "https://id.example.org", "-oidc-client-id", "reach").client("", box); err == nil {
		t.Error("no redirect URL and no base URL: accepted")
	}
	if _, err := parse("-oidc-issuer", "https://id.example.org", "-oidc-client-id", "reach", "-oidc-role", "admin").
		client("https://reach.example.org", box); err == nil {
		t.Error("role admin: accepted")
	}
}

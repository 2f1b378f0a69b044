package main

import (
	"errors"
	"flag"
	"os"
	"strings"

	"github.com/reach-lab/reach/internal/sso"
)

// ssoFlags are reach serve's single sign-on settings.
type ssoFlags struct {
	issuer, clientID, redirectURL, domains, role, label *string
}

func addSSOFlags(fs *flag.FlagSet) ssoFlags {
	return ssoFlags{
		issuer:   fs.String("oidc-issuer", os.Getenv("REACH_OIDC_ISSUER"), "OpenID Connect issuer URL for single sign-on; empty: no SSO (env REACH_OIDC_ISSUER; the client secret comes from env REACH_OIDC_CLIENT_SECRET only)"),
		clientID: fs.String("oidc-client-id", os.Getenv("REACH_OIDC_CLIENT_ID"), "Reach's client id at the OpenID provider (env REACH_OIDC_CLIENT_ID)"),
		redirectURL: fs.String("oidc-redirect-url", os.Getenv("REACH_OIDC_REDIRECT_URL"),
			"callback URL registered at the provider (env REACH_OIDC_REDIRECT_URL; default: --base-url + /login/oidc/callback)"),
		domains: fs.String("oidc-domains", os.Getenv("REACH_OIDC_DOMAINS"),
			"comma-separated email domains whose people get an account at their first SSO sign-in; empty: only existing accounts sign in (env REACH_OIDC_DOMAINS)"),
		role:  fs.String("oidc-role", envOr("REACH_OIDC_ROLE", "viewer"), "role in the default project of accounts created by SSO: viewer, editor or owner (env REACH_OIDC_ROLE)"),
		label: fs.String("oidc-label", os.Getenv("REACH_OIDC_LABEL"), "text of the SSO button on the sign-in page (env REACH_OIDC_LABEL; default: Sign in with SSO)"),
	}
}

// client returns the SSO client of the flags, or nil without an issuer.
func (f ssoFlags) client(baseURL string, seal sso.Sealer) (*sso.Client, error) {
	if *f.issuer == "" {
		return nil, nil
	}
	redirect := *f.redirectURL
	if redirect == "" {
		if baseURL == "" {
			return nil, errors.New("single sign-on: set --oidc-redirect-url or --base-url (the callback URL registered at the provider)")
		}
		redirect = strings.TrimRight(baseURL, "/") + "/login/oidc/callback"
	}
	var domains []string
	for _, d := range strings.Split(*f.domains, ",") {
		if d = strings.TrimSpace(d); d != "" {
			domains = append(domains, d)
		}
	}
	return sso.New(sso.Config{Issuer: *f.issuer, ClientID: *f.clientID, ClientSecret: os.Getenv("REACH_OIDC_CLIENT_SECRET"),
		RedirectURL: redirect, AllowedDomains: domains, DefaultRole: *f.role, Label: *f.label}, seal)
}

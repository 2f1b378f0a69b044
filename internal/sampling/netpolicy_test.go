package sampling

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

func TestParseNetPolicy(t *testing.T) {
	p, err := ParseNetPolicy("allow 10.1.0.0/16 # the GPU subnet\n\ndeny 10.0.0.0/8\n  deny ::ffff:192.0.2.1\nallow fd00::/8\n")
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]string{
		"10.1.2.3": "", "10.2.0.1": "deny 10.0.0.0/8", "192.0.2.1": "deny ::ffff:192.0.2.1", "::ffff:10.9.9.9": "deny 10.0.0.0/8",
		"fd00::1": "", "8.8.8.8": "", "127.0.0.1": "",
	} {
		err := p.Check(netip.MustParseAddr(addr))
		var b *BlockedError
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want allowed", addr, err)
		case want != "" && (!errors.As(err, &b) || b.Rule != want):
			t.Errorf("%s: %v, want blocked by %q", addr, err, want)
		}
	}
	for _, bad := range []string{"deny", "block 10.0.0.0/8", "deny 10.0.0.0/33", "allow gpu1", "deny 10.0.0.0/8 extra"} {
		if _, err := ParseNetPolicy("allow 1.2.3.4\n" + bad); err == nil || !strings.HasPrefix(err.Error(), "line 2:") {
			t.Errorf("%q: %v, want an error naming line 2", bad, err)
		}
	}
	def := DefaultNetPolicy()
	for addr, blocked := range map[string]bool{"169.254.169.254": true, "fd00:ec2::254": true, "fe80::1": true,
		"100.100.100.200": true, "127.0.0.1": false, "::1": false, "10.0.0.5": false, "192.168.1.20": false} {
		if got := def.Check(netip.MustParseAddr(addr)) != nil; got != blocked {
			t.Errorf("default policy, %s: blocked %v, want %v", addr, got, blocked)
		}
	}
}

// withPolicy sets the process policy for one test.
func withPolicy(t *testing.T, text string) {
	t.Helper()
	p, err := ParseNetPolicy(text)
	if err != nil {
		t.Fatal(err)
	}
	old := CurrentNetPolicy()
	SetNetPolicy(p)
	t.Cleanup(func() { SetNetPolicy(old) })
}

// The policy is applied when connecting, to the resolved address: a host
// name ("localhost") that resolves to a denied address is refused like the
// address itself, so re-pointing DNS after a check cannot get past it. The
// refused server never sees a request, and the error is not retried.
func TestNetPolicyAtDialTime(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	withPolicy(t, "deny 127.0.0.0/8\ndeny ::1/128")
	for _, base := range []string{srv.URL, "http://localhost:" + port, "http://0.0.0.0:" + port, "http://[::]:" + port,
		"http://[::ffff:0.0.0.0]:" + port, "http://[::ffff:127.0.0.1]:" + port, "http://[64:ff9b::7f00:1]:" + port} {
		_, err := TestConnection(context.Background(), Endpoint{BaseURL: base, Model: "m", Retry: RetryPolicy{MaxAttempts: 3}}, "")
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindBadRequest || !strings.Contains(e.Message, "not allowed by the endpoint network policy") {
			t.Errorf("%s under a policy denying loopback: %v", base, err)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the denied server got %d requests", hits.Load())
	}
	withPolicy(t, DefaultNetPolicyText)
	if _, err := TestConnection(context.Background(), Endpoint{BaseURL: srv.URL, Model: "m"}, ""); err == nil || hits.Load() == 0 {
		t.Errorf("loopback under the default policy: %v, %d requests (want it reached)", err, hits.Load())
	}
}

// An endpoint that redirects is not followed: the target never gets the
// request (nor the API key), and the error says why.
func TestNoRedirects(t *testing.T) {
	var targetHits atomic.Int64
	var gotKey atomic.Value
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		targetHits.Add(1)
		gotKey.Store(r.Header.Get("Authorization"))
	}))
	defer target.Close()
	for _, code := range []int{301, 302, 307, 308} {
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/v1/completions", code)
		}))
		_, err := TestConnection(context.Background(), Endpoint{BaseURL: redirector.URL, Model: "m", APIKey: "sk-secret-key"}, "")
		redirector.Close()
		if err == nil || !strings.Contains(err.Error(), "redirect") || strings.Contains(err.Error(), target.URL) {
			t.Errorf("HTTP %d redirect: %v, want a short error naming the redirect", code, err)
		}
	}
	if targetHits.Load() != 0 {
		t.Errorf("the redirect target got %d requests (Authorization %v)", targetHits.Load(), gotKey.Load())
	}
	// Within one origin too (the SDK itself refuses other origins only).
	var internal atomic.Int64
	same := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/internal/admin" {
			internal.Add(1)
			return
		}
		http.Redirect(w, r, "/internal/admin", http.StatusFound)
	}))
	defer same.Close()
	if _, err := TestConnection(context.Background(), Endpoint{BaseURL: same.URL, Model: "m", APIKey: "sk-secret-key"}, ""); err == nil ||
		!strings.Contains(err.Error(), "redirect") || internal.Load() != 0 {
		t.Errorf("same-origin redirect: %v, %d requests to the redirect's target", err, internal.Load())
	}
}

// A base URL pointing at some other service shows none of its reply: only
// OpenAI-shaped answers and errors reach the page.
func TestOnlyOpenAIShapedRepliesShown(t *testing.T) {
	const secret = "root:x:0:0 INTERNAL-ADMIN-PANEL token=abc123"
	for name, h := range map[string]http.HandlerFunc{
		"200 text": func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(secret)) },
		"200 HTML": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html><body>" + secret + "</body></html>"))
		},
		"200 other JSON": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"ok","data":"` + secret + `"}`))
		},
		"404 text": func(w http.ResponseWriter, r *http.Request) { http.Error(w, secret, 404) },
		"500 HTML": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			_, _ = w.Write([]byte("<html>" + secret + "</html>"))
		},
		"403 JSON": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(403)
			_, _ = w.Write([]byte(`{"users":["` + secret + `"]}`))
		},
	} {
		srv := httptest.NewServer(h)
		_, err := TestConnection(context.Background(), Endpoint{BaseURL: srv.URL, Model: "m"}, "")
		srv.Close()
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if strings.Contains(err.Error(), "INTERNAL") || strings.Contains(err.Error(), "abc123") || len(err.Error()) > 400 {
			t.Errorf("%s: the error shows the reply: %v", name, err)
		}
	}
}

// TestNetPolicyAddressForms: every spelling of a denied address is denied.
// Unspecified addresses are the local host; IPv6 forms that carry an IPv4
// address (mapped, compatible, NAT64, 6to4, Teredo) are that address too.
func TestNetPolicyAddressForms(t *testing.T) {
	loop, err := ParseNetPolicy("deny 127.0.0.0/8\ndeny ::1/128")
	if err != nil {
		t.Fatal(err)
	}
	def := DefaultNetPolicy()
	for _, c := range []struct {
		addr          string
		loop, metadat bool // blocked under loop, under the default policy
	}{
		{"127.0.0.1", true, false},
		{"0.0.0.0", true, false},
		{"::", true, false},
		{"::ffff:0.0.0.0", true, false},
		{"::ffff:127.0.0.1", true, false},
		{"::1", true, false},
		{"::127.0.0.1", true, false},                          // IPv4-compatible
		{"64:ff9b::7f00:1", true, false},                      // NAT64 of 127.0.0.1
		{"64:ff9b::a9fe:a9fe", false, true},                   // NAT64 of 169.254.169.254
		{"64:ff9b:1:a9fe:a9:fe00::", false, true},             // local-use NAT64 /48 of 169.254.169.254
		{"64:ff9b:1:7f00:0:100::", true, false},               // local-use NAT64 /48 of 127.0.0.1
		{"2002:7f00:1::", true, false},                        // 6to4 of 127.0.0.1
		{"2002:a9fe:a9fe::1", false, true},                    // 6to4 of 169.254.169.254
		{"2001:0:a9fe:a9fe::1", false, true},                  // Teredo server 169.254.169.254
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", true, false}, // Teredo client 127.0.0.1 (obfuscated)
		{"::ffff:169.254.169.254", false, true},
		{"fe80::1%eth0", false, true},
		{"10.0.0.5", false, false},
		{"2001:db8::1", false, false},
		{"2606:4700::6810:85e5", false, false},
	} {
		a := netip.MustParseAddr(c.addr)
		if got := loop.Check(a) != nil; got != c.loop {
			t.Errorf("deny loopback, %s (aliases %v): blocked %v, want %v", c.addr, Aliases(a), got, c.loop)
		}
		if got := def.Check(a) != nil; got != c.metadat {
			t.Errorf("default policy, %s (aliases %v): blocked %v, want %v", c.addr, Aliases(a), got, c.metadat)
		}
	}
}

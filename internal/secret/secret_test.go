package secret

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestSealForOpenFor(t *testing.T) {
	b, err := New("server secret")
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := b.SealFor("sk-live-123", "https://api.example.org/v1/")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("sk-live-123")) {
		t.Fatal("sealed value contains the plaintext")
	}
	// The same endpoint spelled differently opens it.
	for _, u := range []string{"https://api.example.org/v1/", "https://API.example.org:443/v1", "HTTPS://api.example.org/v1//"} {
		if got, err := b.OpenFor(sealed, u); err != nil || got != "sk-live-123" {
			t.Fatalf("OpenFor(%s) = %q, %v", u, got, err)
		}
	}
	// Another scheme, host, port or path never gets it.
	for _, u := range []string{"http://api.example.org/v1", "https://evil.example.org/v1", "https://api.example.org:8443/v1",
		"https://api.example.org/v2", "https://api.example.org/", "https://api.example.org.evil.net/v1", "not a url", ""} {
		if got, err := b.OpenFor(sealed, u); !errors.Is(err, ErrOtherEndpoint) || got != "" {
			t.Fatalf("OpenFor(%q) = %q, %v: want ErrOtherEndpoint", u, got, err)
		}
	}
	other, _ := New("another secret")
	if _, err := other.OpenFor(sealed, "https://api.example.org/v1"); err == nil || !strings.Contains(err.Error(), "REACH_SECRET") {
		t.Fatalf("wrong secret: err = %v", err)
	}
	// The endpoint is authenticated: rewriting the stored id does not move the key.
	forged := bytes.Replace(sealed, []byte("api.example.org"), []byte("evil.example.org")[:15], 1)
	if _, err := b.OpenFor(forged, "https://evil.exampl:443/v1"); err == nil {
		t.Fatal("a sealed value with a rewritten endpoint opened")
	}
	if s, _ := b.SealFor("", "http://x/v1"); s != nil {
		t.Fatal("empty key should seal to nil")
	}
	if _, err := b.SealFor("k", "no-scheme"); err == nil {
		t.Fatal("a key for an unparsable endpoint was sealed")
	}
}

// TestOpenForUnboundValue: keys stored before keys were bound (nonce and
// ciphertext, no endpoint) still open.
func TestOpenForUnboundValue(t *testing.T) {
	b, _ := New("server secret")
	nonce := make([]byte, b.aead.NonceSize())
	nonce[0] = 0x01
	legacy := b.aead.Seal(append([]byte{}, nonce...), nonce, []byte("old-key"), nil)
	if got, err := b.OpenFor(legacy, "http://gpu1:8000/v1"); err != nil || got != "old-key" {
		t.Fatalf("legacy value: %q, %v", got, err)
	}
}

func TestEndpointID(t *testing.T) {
	for in, want := range map[string]string{
		"http://gpu1:8000/v1/":         "http://gpu1:8000/v1",
		"HTTP://GPU1/v1":               "http://gpu1:80/v1",
		"https://u:p@host/v1?x=1#f":    "https://host:443/v1",
		"http://[::1]:8000/v1":         "http://[::1]:8000/v1",
		"http://host:8000":             "http://host:8000",
		"http://host:8000/a%2Fb/":      "http://host:8000/a%2Fb",
		"  http://host:8000/v1 \t":     "http://host:8000/v1",
		"http://0.0.0.0:8000/v1/":      "http://0.0.0.0:8000/v1",
		"https://api.openai.com/v1///": "https://api.openai.com:443/v1",
	} {
		got, err := EndpointID(in)
		if err != nil || got != want {
			t.Errorf("EndpointID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if SameEndpoint("http://a/v1", "http://b/v1") || !SameEndpoint("http://a/v1/", "http://A:80/v1") {
		t.Fatal("SameEndpoint")
	}
}

func TestLoadCreatesAndReusesFile(t *testing.T) {
	t.Setenv("REACH_SECRET", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	a, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	sealed, _ := a.SealFor("k", "http://gpu1:8000/v1")
	b, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.OpenFor(sealed, "http://gpu1:8000/v1"); err != nil || got != "k" {
		t.Fatalf("second Load cannot open the first's value: %q %v", got, err)
	}
}

func TestSealOpenPurpose(t *testing.T) {
	b, err := New("phrase")
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Seal([]byte("value"), "one")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Open(s, "one"); err != nil || string(got) != "value" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := b.Open(s, "two"); err == nil {
		t.Error("opened for another purpose")
	}
	s[len(s)-1] ^= 1
	if _, err := b.Open(s, "one"); err == nil {
		t.Error("opened an altered value")
	}
}

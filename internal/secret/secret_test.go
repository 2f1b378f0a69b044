package secret

import (
	"bytes"
	"strings"
	"testing"
)

func TestSealOpen(t *testing.T) {
	b, err := New("server secret")
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := b.Seal("sk-live-123")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("sk-live-123")) {
		t.Fatal("sealed value contains the plaintext")
	}
	got, err := b.Open(sealed)
	if err != nil || got != "sk-live-123" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	other, _ := New("another secret")
	if _, err := other.Open(sealed); err == nil || !strings.Contains(err.Error(), "REACH_SECRET") {
		t.Fatalf("wrong secret: err = %v", err)
	}
	if s, _ := b.Seal(""); s != nil {
		t.Fatal("empty key should seal to nil")
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
	sealed, _ := a.Seal("k")
	b, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Open(sealed); err != nil || got != "k" {
		t.Fatalf("second Load cannot open the first's value: %q %v", got, err)
	}
}

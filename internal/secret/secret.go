// Package secret encrypts the API keys of inference endpoints at rest
// (AES-256-GCM) with a server secret, so a database dump does not leak them.
//
// The secret comes from REACH_SECRET; without it, a random one is created
// once in the user's config directory (reach/secret, mode 0600). Every
// process that samples (serve, worker on another machine) needs the same
// secret: set REACH_SECRET there.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Box seals and opens short secrets.
type Box struct{ aead cipher.AEAD }

// New derives a box from a secret phrase (any length; SHA-256 makes the key).
func New(phrase string) (*Box, error) {
	if phrase == "" {
		return nil, errors.New("secret: empty server secret")
	}
	key := sha256.Sum256([]byte(phrase))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Load returns the box of REACH_SECRET, or of the secret file in the user's
// config directory, creating that file with a random secret if needed.
func Load() (*Box, error) {
	if v := os.Getenv("REACH_SECRET"); v != "" {
		return New(v)
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return nil, fmt.Errorf("secret: no REACH_SECRET and no config directory: %w", err)
	}
	path := filepath.Join(dir, "reach", "secret")
	if b, err := os.ReadFile(path); err == nil {
		return New(strings.TrimSpace(string(b)))
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	phrase := hex.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("secret: create %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, []byte(phrase+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("secret: write %s: %w", path, err)
	}
	return New(phrase)
}

// Seal encrypts plaintext; an empty plaintext seals to nil.
func (b *Box) Seal(plaintext string) ([]byte, error) {
	if plaintext == "" {
		return nil, nil
	}
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	return b.aead.Seal(nonce, nonce, []byte(plaintext), nil), nil
}

// Open decrypts what Seal produced; nil opens to "". A wrong server secret
// gives an error that says so.
func (b *Box) Open(sealed []byte) (string, error) {
	if len(sealed) == 0 {
		return "", nil
	}
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("secret: sealed value too short")
	}
	out, err := b.aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return "", errors.New("secret: cannot decrypt the stored API key: was REACH_SECRET changed, or is this worker missing it?")
	}
	return string(out), nil
}

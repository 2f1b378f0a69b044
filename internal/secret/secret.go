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
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
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

// ErrOtherEndpoint is returned by OpenFor when a key was sealed for another
// endpoint than the one it is asked for.
var ErrOtherEndpoint = errors.New("secret: the stored API key was given for another endpoint (scheme, host, port or path changed): type the key again")

// sealedV2 marks a value sealed for one endpoint (SealFor). Values without it
// (or that do not open as such) are read as the first, unbound format.
const sealedV2 = 0x02

// EndpointID is the part of an endpoint's base URL a stored key is bound to:
// scheme, host and port (the scheme's default when absent), and the path
// without trailing slashes, e.g. "https://api.example.org:443/v1". Case of
// scheme and host, user info, query and fragment do not count. An empty or
// unparsable URL gives an error.
func EndpointID(baseURL string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return "", fmt.Errorf("secret: endpoint %q: %w", baseURL, err)
	}
	if u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("secret: endpoint %q has no scheme or host", baseURL)
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	p := u.EscapedPath()
	for strings.HasSuffix(p, "/") {
		p = strings.TrimSuffix(p, "/")
	}
	return scheme + "://" + net.JoinHostPort(host, port) + p, nil
}

// SameEndpoint tells whether two base URLs are one endpoint for a stored key
// (equal EndpointIDs); an unparsable URL is never the same.
func SameEndpoint(a, b string) bool {
	x, err1 := EndpointID(a)
	y, err2 := EndpointID(b)
	return err1 == nil && err2 == nil && x == y
}

// SealFor encrypts an endpoint's API key bound to that endpoint. The sealed
// value is 0x02, the EndpointID's length (uvarint) and bytes, then nonce and
// ciphertext; the EndpointID is authenticated with the key, so OpenFor gives
// it back only for the same endpoint. An empty key seals to nil.
func (b *Box) SealFor(key, baseURL string) ([]byte, error) {
	if key == "" {
		return nil, nil
	}
	id, err := EndpointID(baseURL)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	out := binary.AppendUvarint([]byte{sealedV2}, uint64(len(id)))
	out = append(append(out, id...), nonce...)
	return b.aead.Seal(out, nonce, []byte(key), boundTo(id)), nil
}

// OpenFor decrypts what SealFor sealed for this endpoint; nil opens to "".
// A key sealed for another endpoint gives ErrOtherEndpoint (and is never
// decrypted); a wrong server secret an error that says so. Keys stored before
// keys were bound (nonce and ciphertext only) still open: the handlers drop
// them when their endpoint changes.
func (b *Box) OpenFor(sealed []byte, baseURL string) (string, error) {
	if len(sealed) == 0 {
		return "", nil
	}
	n := b.aead.NonceSize()
	if id, rest, ok := splitBound(sealed); ok {
		want, err := EndpointID(baseURL)
		if err != nil || want != id {
			return "", ErrOtherEndpoint
		}
		if len(rest) >= n {
			if out, err := b.aead.Open(nil, rest[:n], rest[n:], boundTo(id)); err == nil {
				return string(out), nil
			}
		}
		return "", errWrongSecret
	}
	if len(sealed) < n {
		return "", errors.New("secret: sealed value too short")
	}
	out, err := b.aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return "", errWrongSecret
	}
	return string(out), nil
}

var errWrongSecret = errors.New("secret: cannot decrypt the stored API key: was REACH_SECRET changed, or is this worker missing it?")

// splitBound reads SealFor's header. An unbound value (random nonce first)
// passes for a bound one with a tiny chance; its id then is not a URL one
// would ask for, and OpenFor's fallback is not reached: acceptable, since an
// unbound value only exists from before binding.
func splitBound(sealed []byte) (id string, rest []byte, ok bool) {
	if len(sealed) < 2 || sealed[0] != sealedV2 {
		return "", nil, false
	}
	l, k := binary.Uvarint(sealed[1:])
	if k <= 0 || l > 4096 || uint64(len(sealed)-1-k) < l {
		return "", nil, false
	}
	id = string(sealed[1+k : 1+k+int(l)])
	if !strings.Contains(id, "://") {
		return "", nil, false
	}
	return id, sealed[1+k+int(l):], true
}

func boundTo(id string) []byte { return []byte("reach endpoint key\x00" + id) }

// Seal encrypts a short value for one purpose ("sso flow"): the purpose is
// authenticated with it, so Open gives it back only for the same purpose.
// The result is the nonce, then the ciphertext.
func (b *Box) Seal(plain []byte, purpose string) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	return b.aead.Seal(nonce, nonce, plain, []byte("reach sealed\x00"+purpose)), nil
}

// Open decrypts what Seal sealed for purpose; an altered value, another
// purpose or another server secret gives an error.
func (b *Box) Open(sealed []byte, purpose string) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("secret: sealed value too short")
	}
	out, err := b.aead.Open(nil, sealed[:n], sealed[n:], []byte("reach sealed\x00"+purpose))
	if err != nil {
		return nil, errors.New("secret: cannot open the sealed value")
	}
	return out, nil
}

package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
)

// Devices issues and checks device tokens: proof that a browser signed in
// to an account before (OWASP's "device cookie" defence against both
// password guessing and lockout). A browser with a valid token for the
// account it signs in to is limited on its own, so an attacker guessing
// the account's password from elsewhere cannot lock its owner out. A token
// is 128 random bits and an HMAC-SHA256 over the account and those bits
// under a key held in memory: a restart makes every browser unknown again,
// as it forgets the sign-in limits too.
type Devices struct{ key []byte }

// NewDevices makes a random key.
func NewDevices() (*Devices, error) {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("device key: %w", err)
	}
	return &Devices{key: k}, nil
}

func (d *Devices) mac(account string, nonce []byte) []byte {
	m := hmac.New(sha256.New, d.key)
	m.Write([]byte("reach-device\x00" + account + "\x00"))
	m.Write(nonce)
	return m.Sum(nil)
}

// Issue returns a new token for account (a normalised email).
func (d *Devices) Issue(account string) (string, error) {
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("device token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(append(nonce, d.mac(account, nonce)...)), nil
}

// Check returns the token's device id (hex of its random bits) if token
// was issued for account, and ok false otherwise.
func (d *Devices) Check(token, account string) (id string, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) != 16+sha256.Size {
		return "", false
	}
	if !hmac.Equal(b[16:], d.mac(account, b[:16])) {
		return "", false
	}
	return hex.EncodeToString(b[:16]), true
}

// Package auth holds Reach's account primitives, all pure or in-memory:
// argon2id password hashes (RFC 9106), random bearer tokens kept only as
// SHA-256 digests, project roles and what each may do, and what slows down
// password guessing: the sliding-window Limiter, the Gate that caps
// concurrent argon2 work, and the Devices tokens of browsers that signed in
// before.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id's cost settings. DefaultParams follow OWASP's
// password storage cheat sheet (m = 19 MiB, t = 2, p = 1), a floor that
// keeps one verification near 30 ms on a server core.
type Params struct {
	MemoryKiB uint32
	Time      uint32
	Threads   uint8
}

// DefaultParams is what new hashes use.
var DefaultParams = Params{MemoryKiB: 19 * 1024, Time: 2, Threads: 1}

const (
	saltLen = 16
	keyLen  = 32
	// MinPasswordLen is the shortest password accepted (NIST SP 800-63B: 8).
	MinPasswordLen = 10
)

// ErrMismatch is returned by CheckPassword when the password is wrong.
var ErrMismatch = errors.New("wrong password")

// HashPassword returns the PHC string of password under argon2id with p:
// "$argon2id$v=19$m=19456,t=2,p=1$<salt>$<key>" (base64 without padding).
func HashPassword(password string, p Params) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, p.Time, p.MemoryKiB, p.Threads, keyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.MemoryKiB, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// CheckPassword compares password with a hash from HashPassword, in
// constant time. It returns nil on a match, ErrMismatch on a wrong password,
// and another error for a malformed hash (an empty hash: no password set).
func CheckPassword(hash, password string) error {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return errors.New("password hash is not an argon2id PHC string")
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return fmt.Errorf("argon2 version %q not supported", parts[2])
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemoryKiB, &p.Time, &p.Threads); err != nil {
		return fmt.Errorf("argon2 parameters %q: %w", parts[3], err)
	}
	if p.MemoryKiB > 1<<21 || p.Time > 64 || p.Threads == 0 {
		return fmt.Errorf("argon2 parameters %q out of range", parts[3])
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return fmt.Errorf("argon2 salt: %w", err)
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return fmt.Errorf("argon2 key: %v", err)
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.MemoryKiB, p.Threads, uint32(len(want)))
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return ErrMismatch
	}
	return nil
}

// CheckPasswordPolicy says what is wrong with a new password, or nil.
func CheckPasswordPolicy(password string) error {
	if len([]rune(password)) < MinPasswordLen {
		return fmt.Errorf("use at least %d characters", MinPasswordLen)
	}
	if len(password) > 1024 {
		return errors.New("use at most 1024 bytes")
	}
	return nil
}

// Token prefixes: they tell a leaked string's kind at a glance (and let
// secret scanners find them).
const (
	PrefixAPI     = "reach_"
	PrefixSession = "rs_"
	PrefixShare   = "rsh_"
	PrefixInvite  = "rinv_"
)

// NewToken returns prefix + 256 random bits in unpadded base64url, and the
// SHA-256 of the whole string, which is all the database keeps.
func NewToken(prefix string) (token string, hash []byte, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("random token: %w", err)
	}
	token = prefix + base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token), nil
}

// HashToken is the SHA-256 of a token: tokens carry 256 random bits, so a
// fast unsalted hash is enough to make a stolen table useless.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// OneTimePassword returns a random password of 20 base32-ish characters
// (about 100 bits) for `reach user create` to print.
func OneTimePassword() (string, error) {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789" // 32 symbols, no look-alikes
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random password: %w", err)
	}
	for i := range b {
		b[i] = alphabet[b[i]%32]
	}
	return string(b[:5]) + "-" + string(b[5:10]) + "-" + string(b[10:15]) + "-" + string(b[15:]), nil
}

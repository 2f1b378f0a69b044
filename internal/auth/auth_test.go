package auth

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var fast = Params{MemoryKiB: 64, Time: 1, Threads: 1}

func TestPasswordHash(t *testing.T) {
	h, err := HashPassword("correct horse battery", DefaultParams)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %q does not carry argon2id and its parameters", h)
	}
	if err := CheckPassword(h, "correct horse battery"); err != nil {
		t.Errorf("right password: %v", err)
	}
	if err := CheckPassword(h, "correct horse batterY"); !errors.Is(err, ErrMismatch) {
		t.Errorf("wrong password: %v, want ErrMismatch", err)
	}
	h2, _ := HashPassword("correct horse battery", DefaultParams)
	if h2 == h {
		t.Error("two hashes of one password are equal: salt not random")
	}
	for _, bad := range []string{"", "$2a$10$abc", "$argon2id$v=19$m=x$a$b", "$argon2i$v=19$m=1,t=1,p=1$YQ$YQ"} {
		if err := CheckPassword(bad, "x"); err == nil || errors.Is(err, ErrMismatch) {
			t.Errorf("malformed hash %q: %v, want a format error", bad, err)
		}
	}
	// Parameters come from the hash, not from DefaultParams.
	hf, _ := HashPassword("pw-with-cheap-params", fast)
	if err := CheckPassword(hf, "pw-with-cheap-params"); err != nil {
		t.Errorf("cheap params: %v", err)
	}
}

// The reference implementation's vector (phc-winner-argon2 CLI: argon2id,
// t=1, m=64 KiB, p=1, password "password", salt "somesalt", 24-byte key
// 655ad15e…28bb) in PHC form: CheckPassword must accept it.
func TestPasswordHashStable(t *testing.T) {
	const h = "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQ$ZVrRXqxlLcWfcXCnMyv0m4Rpvh/bnCi7"
	if err := CheckPassword(h, "password"); err != nil {
		t.Fatalf("pinned hash: %v", err)
	}
}

func TestTokens(t *testing.T) {
	a, ha, err := NewToken(PrefixShare)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := NewToken(PrefixShare)
	if a == b || !strings.HasPrefix(a, PrefixShare) || len(a) != len(PrefixShare)+43 {
		t.Errorf("tokens %q %q: want distinct, prefixed, 256 bits", a, b)
	}
	if string(HashToken(a)) != string(ha) || len(ha) != 32 {
		t.Error("HashToken differs from NewToken's hash")
	}
	p, err := OneTimePassword()
	if err != nil || len(p) != 23 || CheckPasswordPolicy(p) != nil {
		t.Errorf("one-time password %q (%v)", p, err)
	}
}

func TestRoles(t *testing.T) {
	cases := []struct {
		r                  Role
		read, edit, manage bool
	}{
		{NoRole, false, false, false},
		{Viewer, true, false, false},
		{Editor, true, true, false},
		{Owner, true, true, true},
	}
	for _, c := range cases {
		if c.r.Allows(Read) != c.read || c.r.Allows(Edit) != c.edit || c.r.Allows(Manage) != c.manage {
			t.Errorf("%q: read/edit/manage = %v %v %v", c.r, c.r.Allows(Read), c.r.Allows(Edit), c.r.Allows(Manage))
		}
		if c.r != NoRole && ParseRole(c.r.String()) != c.r {
			t.Errorf("ParseRole(%q) = %v", c.r.String(), ParseRole(c.r.String()))
		}
	}
	if ParseRole("admin") != NoRole {
		t.Error("admin is not a project role")
	}
}

func TestLimiter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := NewLimiter(3, time.Minute)
	l.now = func() time.Time { return now }
	for i := range 3 {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("refused after %d failures", i)
		}
		l.Fail("a")
		now = now.Add(10 * time.Second)
	}
	ok, wait := l.Allow("a")
	if ok || wait != 30*time.Second {
		t.Fatalf("after 3 failures at 0, 10, 20 s (now 30 s): allow %v, wait %v; want refused for 30 s", ok, wait)
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Error("another key is refused")
	}
	now = now.Add(30 * time.Second) // the first failure leaves the window
	if ok, _ := l.Allow("a"); !ok {
		t.Error("still refused after the oldest failure left the window")
	}
	l.Fail("a")
	l.Reset("a")
	if ok, _ := l.Allow("a"); !ok {
		t.Error("refused after Reset")
	}
}

// BenchmarkCheckPassword is the cost of one sign-in attempt with
// DefaultParams (what an attacker pays per guess, besides the limiter).
func BenchmarkCheckPassword(b *testing.B) {
	h, err := HashPassword("correct horse battery", DefaultParams)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := CheckPassword(h, "correct horse battery"); err != nil {
			b.Fatal(err)
		}
	}
}

package auth

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
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
		if ok, _ := l.Take("a"); !ok {
			t.Fatalf("refused after %d attempts", i)
		}
		now = now.Add(10 * time.Second)
	}
	ok, wait := l.Take("a")
	if ok || wait != 30*time.Second {
		t.Fatalf("after 3 attempts at 0, 10, 20 s (now 30 s): take %v, wait %v; want refused for 30 s", ok, wait)
	}
	if ok, _ := l.Take("b"); !ok {
		t.Error("another key is refused")
	}
	now = now.Add(30 * time.Second) // the first attempt leaves the window
	if ok, _ := l.Take("a"); !ok {
		t.Error("still refused after the oldest attempt left the window")
	}
	if ok, _ := l.Take("a"); ok {
		t.Error("a refused Take was counted as an attempt, or a taken one was not")
	}
	l.Forgive("a") // the last one succeeded
	if ok, _ := l.Take("a"); !ok {
		t.Error("refused after Forgive")
	}
	l.Reset("a")
	for range 3 {
		if ok, _ := l.Take("a"); !ok {
			t.Error("refused after Reset")
		}
	}
}

// Attempts are counted when taken, so many at once cannot exceed the
// limit (the check-then-fail race of counting only failures).
func TestLimiterParallel(t *testing.T) {
	l := NewLimiter(5, time.Minute)
	var wg sync.WaitGroup
	var allowed atomic.Int64
	for range 100 {
		wg.Go(func() {
			if ok, _ := l.Take("acct"); ok {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if allowed.Load() != 5 {
		t.Errorf("%d of 100 parallel attempts allowed, want 5", allowed.Load())
	}
}

func TestGate(t *testing.T) {
	g := NewGate(2, 50*time.Millisecond)
	release := make(chan struct{})
	var wg sync.WaitGroup
	var busy, ran atomic.Int64
	for range 10 {
		wg.Go(func() {
			err := g.Do(context.Background(), func() {
				ran.Add(1)
				<-release
			})
			if errors.Is(err, ErrBusy) {
				busy.Add(1)
			}
		})
	}
	time.Sleep(200 * time.Millisecond) // the 8 without a slot give up after 50 ms
	close(release)
	wg.Wait()
	if g.Peak() != 2 || ran.Load() != 2 || busy.Load() != 8 {
		t.Errorf("peak %d, ran %d, busy %d; want 2, 2, 8", g.Peak(), ran.Load(), busy.Load())
	}
	if NewGate(0, time.Second).slots == nil || cap(NewGate(0, time.Second).slots) != runtime.GOMAXPROCS(0) {
		t.Error("a gate of 0 slots does not get one per core")
	}
}

func TestDevices(t *testing.T) {
	d, err := NewDevices()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := d.Issue("a@x.org")
	if err != nil {
		t.Fatal(err)
	}
	id, ok := d.Check(tok, "a@x.org")
	if !ok || len(id) != 32 {
		t.Fatalf("own token: %q %v", id, ok)
	}
	if _, ok := d.Check(tok, "b@x.org"); ok {
		t.Error("a token of a@x.org passes for b@x.org")
	}
	other, _ := NewDevices()
	if _, ok := other.Check(tok, "a@x.org"); ok {
		t.Error("a token passes under another key")
	}
	bad := []byte(tok)
	bad[len(bad)-2] ^= 1
	for _, b := range []string{"", "x", string(bad), tok + "A"} {
		if _, ok := d.Check(b, "a@x.org"); ok {
			t.Errorf("forged token %q passes", b)
		}
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

package auth

import (
	"sync"
	"time"
)

// Limiter counts attempts per key (an account, a client address, a
// browser) in a sliding window and refuses a key that reached its limit
// until its oldest attempt leaves the window. An attempt is counted by
// Take, before the password is checked, so parallel requests cannot all
// slip in before any failure is recorded; a successful attempt is taken
// back with Forgive. It lives in memory: each web process limits on its
// own, which bounds guessing to processes × Max per window.
type Limiter struct {
	Max    int
	Window time.Duration
	now    func() time.Time

	mu   sync.Mutex
	hits map[string][]time.Time
}

// NewLimiter allows max attempts per key within window.
func NewLimiter(max int, window time.Duration) *Limiter {
	return &Limiter{Max: max, Window: window, now: time.Now, hits: map[string][]time.Time{}}
}

// prune drops attempts older than the window; the caller holds mu.
func (l *Limiter) prune(key string, now time.Time) []time.Time {
	hs := l.hits[key]
	i := 0
	for i < len(hs) && now.Sub(hs[i]) >= l.Window {
		i++
	}
	hs = hs[i:]
	if len(hs) == 0 {
		delete(l.hits, key)
		return nil
	}
	l.hits[key] = hs
	return hs
}

// Take records an attempt of key and reports true if key was under its
// limit; otherwise it records nothing and says how long until key may
// try again.
func (l *Limiter) Take(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	hs := l.prune(key, now)
	if len(hs) >= l.Max {
		return false, hs[len(hs)-l.Max].Add(l.Window).Sub(now)
	}
	l.hits[key] = append(hs, now)
	if len(l.hits) > 100_000 { // many addresses: forget the ones whose window passed
		for k := range l.hits {
			l.prune(k, now)
		}
	}
	return true, 0
}

// Forgive takes back key's latest attempt (it succeeded, or was never
// checked).
func (l *Limiter) Forgive(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	hs := l.hits[key]
	if len(hs) <= 1 {
		delete(l.hits, key)
		return
	}
	l.hits[key] = hs[:len(hs)-1]
}

// Reset forgets all of key's attempts.
func (l *Limiter) Reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.hits, key)
}

package auth

import (
	"sync"
	"time"
)

// Limiter counts failures per key (an account's email, a client address)
// in a sliding window and refuses a key that reached its limit until its
// oldest failure leaves the window. It lives in memory: each web process
// limits on its own, which bounds guessing to processes × Max per window.
type Limiter struct {
	Max    int
	Window time.Duration
	now    func() time.Time

	mu   sync.Mutex
	hits map[string][]time.Time
}

// NewLimiter allows max failures per key within window.
func NewLimiter(max int, window time.Duration) *Limiter {
	return &Limiter{Max: max, Window: window, now: time.Now, hits: map[string][]time.Time{}}
}

// prune drops failures older than the window; the caller holds mu.
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

// Allow reports whether key may try again, and if not, how long until it may.
func (l *Limiter) Allow(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	hs := l.prune(key, now)
	if len(hs) < l.Max {
		return true, 0
	}
	return false, hs[len(hs)-l.Max].Add(l.Window).Sub(now)
}

// Fail records a failure of key.
func (l *Limiter) Fail(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.hits[key] = append(l.prune(key, now), now)
	if len(l.hits) > 100_000 { // many addresses: forget the ones whose window passed
		for k := range l.hits {
			l.prune(k, now)
		}
	}
}

// Reset forgets key's failures (after a successful sign-in).
func (l *Limiter) Reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.hits, key)
}

package sampling

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// RetryPolicy bounds the retries of one Sample call. Rate limits (429), server
// errors (5xx), timeouts and connection failures are retried with exponential
// backoff and jitter; other errors are returned at once. Zero fields take the
// defaults noted on each.
type RetryPolicy struct {
	MaxAttempts int           // attempts per request including the first; default 6
	BaseDelay   time.Duration // backoff before the second attempt; default 500ms, doubling after
	MaxDelay    time.Duration // cap on any single wait, including a server's Retry-After; default 30s
	// DownAfter is how long an endpoint may stay unreachable (every attempt
	// refused, DNS failing, no route; no answer at all in between) before
	// requests to it fail for good with an *Error whose Down is set. Until
	// then such attempts are retried past MaxAttempts (unless MaxAttempts
	// is 1: no retries at all), so a server that restarts within DownAfter
	// is waited for. Default DefaultDownAfter.
	DownAfter time.Duration
}

// DefaultDownAfter is RetryPolicy.DownAfter's default: long enough for an
// inference server to restart, short enough that a wrong address or port
// is reported within about two minutes.
const DefaultDownAfter = 2 * time.Minute

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 6
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 500 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	if p.DownAfter <= 0 {
		p.DownAfter = DefaultDownAfter
	}
	return p
}

// delay returns the wait before attempt number attempt+1 (attempt counts from 1).
// It is "equal jitter" backoff: half of min(MaxDelay, BaseDelay·2^(attempt-1))
// fixed plus a uniform random part up to the other half, so concurrent callers
// spread out without ever retrying immediately. A server's Retry-After wins when
// it is longer, up to MaxDelay.
func (p RetryPolicy) delay(attempt int, retryAfter time.Duration) time.Duration {
	d := p.BaseDelay
	for i := 1; i < attempt && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	d = d/2 + rand.N(d/2+1)
	if retryAfter > d {
		d = min(retryAfter, p.MaxDelay)
	}
	return d
}

// parseRetryAfter reads Retry-After-Ms (used by OpenAI) or Retry-After in
// seconds or as an HTTP date (RFC 9110 §10.2.3). It returns 0 when absent or
// unparsable.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

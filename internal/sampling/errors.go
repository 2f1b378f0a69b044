package sampling

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"
)

// Error kinds reported by ErrorKind, for the progress page's "errors by kind".
const (
	KindRateLimit  = "rate_limit" // HTTP 429
	KindServer     = "server"     // HTTP 5xx
	KindTimeout    = "timeout"    // an attempt ran past Endpoint.Timeout (or the caller's deadline)
	KindConnection = "connection" // refused, reset, DNS failure, connection closed mid-response
	KindBadRequest = "bad_request"
	KindAuth       = "auth" // HTTP 401 or 403
	KindOther      = "other"
)

// Error is what Sample and TestConnection return when a request fails (a
// caller's cancelled or expired context comes back as ctx.Err(), wrapped). Its
// message is readable as is and never contains the endpoint's API key: URLs in
// it are stripped of user info and query strings, and the key is scrubbed from
// any text the server sent back.
type Error struct {
	Kind     string // one of the Kind* constants
	Status   int    // HTTP status, 0 when no response arrived
	Message  string // e.g. "401 Unauthorized: invalid API key"
	Attempts int    // attempts made, including the first
	// Unreachable: no connection could be made (refused, DNS failure, no
	// route, connect timeout), as opposed to a server that answered badly.
	Unreachable bool
	// Down: the endpoint has been unreachable for RetryPolicy.DownAfter
	// with no answer in between; the message says since when and how often
	// it was tried. Not retryable.
	Down bool

	retryAfter time.Duration // wait the server asked for (Retry-After), 0 if none
}

func (e *Error) Error() string {
	if e.Attempts > 1 && !e.Down {
		return fmt.Sprintf("%s (gave up after %d attempts)", e.Message, e.Attempts)
	}
	return e.Message
}

// Retryable reports whether the error kind is worth another attempt:
// rate limits, server errors, timeouts and connection failures.
func (e *Error) Retryable() bool {
	if e.Down {
		return false
	}
	switch e.Kind {
	case KindRateLimit, KindServer, KindTimeout, KindConnection:
		return true
	}
	return false
}

// ErrorKind classifies any error returned by this package (or a raw transport
// error) into one of "rate_limit", "server", "timeout", "connection",
// "bad_request", "auth" or "other". A nil error gives "".
func ErrorKind(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return transportKind(err)
}

// transportKind classifies an error that came back without an HTTP response.
func transportKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return KindTimeout
	case errors.Is(err, context.Canceled):
		return KindOther
	case errors.As(err, &ne) && ne.Timeout():
		return KindTimeout
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr), errors.As(err, &opErr),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE):
		return KindConnection
	}
	return KindOther
}

// unreachable reports whether a transport error happened before any
// connection was made: a server that is not there rather than one that
// answered badly or dropped a reply.
func unreachable(err error) bool {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// statusKind classifies an HTTP error status.
func statusKind(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return KindRateLimit
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return KindAuth
	case status == http.StatusRequestTimeout:
		return KindTimeout
	case status >= 500:
		return KindServer
	case status >= 400:
		return KindBadRequest
	}
	return KindOther
}

// transportMessage renders a transport error as "<cause> at <url>", dropping
// the request URL net/http puts in front (it could carry credentials).
func transportMessage(err error, at string) string {
	cause := err
	var uerr *url.Error
	if errors.As(err, &uerr) {
		cause = uerr.Err
	}
	var opErr *net.OpError
	if errors.As(cause, &opErr) && opErr.Err != nil {
		cause = opErr.Err // "connect: connection refused", "read: connection reset by peer"
	}
	msg := cause.Error()
	switch {
	case errors.Is(cause, io.EOF), errors.Is(cause, io.ErrUnexpectedEOF):
		msg = "server closed the connection without a response"
	case transportKind(err) == KindTimeout:
		msg = "timed out waiting for the server"
	}
	return fmt.Sprintf("%s at %s", msg, at)
}

// redactURL returns u without user info, query or fragment, for messages.
func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.Fragment = ""
	return c.String()
}

// scrub removes secret from s; keys shorter than 4 bytes are not scrubbed
// because replacing them would mangle ordinary words.
func scrub(s, secret string) string {
	if len(secret) < 4 {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}

// serverMessage digs the human-readable message out of an error body in the
// shapes OpenAI-compatible servers use: {"error":{"message"}} (OpenAI, recent
// vLLM, Ollama), {"message"} (older vLLM), {"error":"..."} (TGI) and
// {"detail":"..."} (FastAPI), whitespace collapsed and cut to 300 bytes.
// Any other body gives "": a base URL pointing at some other service must
// not turn Reach into a window onto that service's replies.
func serverMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	var inner struct {
		Message string `json:"message"`
	}
	var s string
	switch {
	case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
		s = inner.Message
	case json.Unmarshal(v.Error, &s) == nil && s != "":
	case v.Message != "":
		s = v.Message
	case json.Unmarshal(v.Detail, &s) == nil && s != "":
	default:
		return ""
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "…"
	}
	return s
}

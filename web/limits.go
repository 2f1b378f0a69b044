package web

import (
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/reach-lab/reach/internal/ingest"
)

// Size limits of what people type into forms and API fields: every text
// field has one, and a longer value is refused with an error naming the
// field and the limit (never cut silently). Lengths are in characters,
// except the body caps, in bytes.
const (
	maxEmail    = 254  // RFC 5321's longest address
	maxPassword = 1024 // bytes; auth.CheckPasswordPolicy's limit for new passwords
	maxName     = 200  // comparison, project, model and API token names
	maxNote     = 4000 // review and verdict override notes
	maxURL      = 2048 // an endpoint's base URL
	maxModelID  = 256  // the model name an endpoint serves
	maxAPIKey   = 4096
	maxStops    = 32 // stop strings, each at most maxStopLen
	maxStopLen  = 256
	// maxFieldBytes caps one field of a multipart upload form (files aside).
	maxFieldBytes = 64 << 10
	// maxFormBytes caps a urlencoded form or JSON body: the largest field
	// (the endpoint network policy, 64 KiB) with room to spare.
	maxFormBytes = 1 << 20
)

// tooLong returns a form error if v has more than max characters.
func tooLong(field, v string, max int) error {
	if n := utf8.RuneCountInString(v); n > max {
		return badForm("%s: at most %d characters (this one has %d)", field, max, n)
	}
	return nil
}

// firstTooLong is the first tooLong error of field/value/limit triples.
func firstTooLong(checks ...lenCheck) error {
	for _, c := range checks {
		if err := tooLong(c.field, c.value, c.max); err != nil {
			return err
		}
	}
	return nil
}

type lenCheck struct {
	field, value string
	max          int
}

// limitBodies caps the body of every state-changing request that is not a
// multipart upload at maxFormBytes (uploads have their own limits).
func limitBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// parseForm parses a urlencoded form; on failure it answers (413 for a
// body over maxFormBytes, else 400) and returns false.
func (s *Server) parseForm(w http.ResponseWriter, r *http.Request) bool {
	err := r.ParseForm()
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		return true
	case errors.As(err, &tooBig):
		s.deny(w, r, http.StatusRequestEntityTooLarge, "The form is over 1 MiB; shorten what you typed.")
	default:
		s.deny(w, r, http.StatusBadRequest, "Could not read the form.")
	}
	return false
}

// mappingTooLong checks the field paths of a field mapping (each at most
// maxName characters).
func mappingTooLong(m ingest.Mapping) error {
	return firstTooLong(lenCheck{"problem id field", m.ProblemID, maxName}, lenCheck{"id kind", m.IDKind, maxName},
		lenCheck{"list field", m.List, maxName}, lenCheck{"completion field", m.Completion, maxName},
		lenCheck{"verdict field", m.Correct, maxName}, lenCheck{"extracted answer field", m.Extracted, maxName},
		lenCheck{"sample index field", m.SampleIndex, maxName}, lenCheck{"finish reason field", m.FinishReason, maxName},
		lenCheck{"tokens field", m.Tokens, maxName}, lenCheck{"question field", m.Question, maxName},
		lenCheck{"prompt field", m.Prompt, maxName}, lenCheck{"reference field", m.Reference, maxName})
}

package analysis

import (
	"fmt"
	"io"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// WriteJSON writes the report as indented JSON followed by a newline, the
// bytes encoding/json's Encoder with SetIndent("", "  ") gives, streamed:
// the encoder flushes every few kilobytes instead of building the whole
// document first (a million problems make a report JSON of about 440 MB,
// which encoding/json held in memory twice over). Errors are the writer's,
// wrapped.
func (rep *Report) WriteJSON(w io.Writer) error {
	if err := jsonv2.MarshalWrite(w, rep, jsonv1.DefaultOptionsV1(), jsontext.Multiline(true), jsontext.WithIndent("  ")); err != nil {
		return fmt.Errorf("report of comparison %d as JSON: %w", rep.ComparisonID, err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("report of comparison %d as JSON: %w", rep.ComparisonID, err)
	}
	return nil
}

// Package ingest parses Reach's upload formats into canonical records, streaming: problem sets
// (ReadDataset), per-sample generations and per-problem counts (ReadSamples), and guesses which
// format an upload is from its first bytes (Sniff).
//
// Nothing here does I/O beyond the reader it is given (and a temporary file when a parquet or zip
// file arrives as a stream), and no reader holds a whole file: JSONL is read one line at a time,
// JSON documents one sample at a time, parquet one row group at a time, zip one member at a time;
// every record is bounded by Limits.
// Every malformed input comes back as *Error naming file, line (or record) and field: a permanent
// error, never worth retrying. Errors returned by the caller's callbacks come back wrapped
// (errors.Is/As see them) and are never *Error; a failed read of the input is a plain wrapped error.
package ingest

import (
	"fmt"
	"strings"
)

// Error names where an input is bad. Error() is "FILE:LINE: FIELD: MSG" (or "FILE: RECORD: FIELD:
// MSG" for a record that is not a line); the field part is left out when Field is empty and the line
// part when Line is 0 (a problem with the whole file, e.g. empty).
type Error struct {
	File string // the name the caller passed (usually the uploaded file's name)
	Line int    // 1-based line in the file; 0 = the file as a whole, or see Record
	// Record names a record that is not a line: "row 12" of a parquet file, "samples[3]" of a JSON
	// document, "samples/1_epoch_2.json" of an Inspect .eval zip. "" for lines.
	Record string
	Field  string // JSON field or CSV column, with list positions ("rollouts[3].correct"); "" if none
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Record != "" {
		b.WriteString(": ")
		b.WriteString(e.Record)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

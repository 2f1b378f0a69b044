// Package ingest parses Reach's upload formats into canonical records, streaming: problem sets
// (ReadDataset), per-sample generations and per-problem counts (ReadSamples), and guesses which
// format an upload is from its first bytes (Sniff).
//
// Nothing here does I/O beyond the io.Reader it is given, and no reader holds a whole file: JSONL is
// read one line at a time; a line up to 4 MiB is read whole and scanned (fast), a longer one (a Qwen
// evaluator line with 1,024 completions can be tens of MB) is token-streamed so its raw text is never
// held next to the decoded completions. Lines may be up to 256 MiB.
// Every malformed input comes back as *Error naming file, line and field; errors returned by the
// caller's callbacks come back wrapped (errors.Is/As see them) and are never *Error.
package ingest

import (
	"fmt"
	"strings"
)

// Error names where an input is bad. Error() is "FILE:LINE: FIELD: MSG"; the field part is left out
// when Field is empty and the line part when Line is 0 (a problem with the whole file, e.g. empty).
type Error struct {
	File  string // the name the caller passed (usually the uploaded file's name)
	Line  int    // 1-based line in the file; 0 = the file as a whole
	Field string // JSON field or CSV column, with list positions ("rollouts[3].correct"); "" if none
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

package ingest

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// readCounts reads a per-problem counts CSV: a header naming problem_id, n and correct (or c), in any
// order and case, other columns ignored; CRLF and a UTF-8 BOM are fine.
func readCounts(r io.Reader, file string, onCount func(Count) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1 // checked below, with a better message
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err == io.EOF {
		return &Error{File: file, Msg: "empty file: no CSV header"}
	}
	if err != nil {
		return csvErr(file, err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		if _, dup := col[h]; !dup {
			col[h] = i
		}
	}
	id, okID := col["problem_id"]
	n, okN := col["n"]
	c, okC := col["correct"]
	cName := "correct"
	if !okC {
		c, okC = col["c"]
		cName = "c"
	}
	if !okID || !okN || !okC {
		return &Error{File: file, Line: 1, Msg: fmt.Sprintf("CSV header must name %s; got %q", countsColumns, strings.Join(header, ","))}
	}
	need := max(id, n, c) + 1
	seen := map[string]int{}
	rows := 0
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return csvErr(file, err)
		}
		line, _ := cr.FieldPos(0)
		bad := func(field, format string, args ...any) error {
			return &Error{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
		}
		if len(rec) < need {
			return bad("", "has %d columns, want at least %d (per the header)", len(rec), need)
		}
		key := strings.TrimSpace(rec[id])
		if key == "" {
			return bad("problem_id", "empty problem id")
		}
		nv, err := strconv.Atoi(strings.TrimSpace(rec[n]))
		if err != nil || nv < 1 {
			return bad("n", "want a whole number of samples, at least 1, got %q", rec[n])
		}
		cv, err := strconv.Atoi(strings.TrimSpace(rec[c]))
		if err != nil || cv < 0 {
			return bad(cName, "want a non-negative integer, got %q", rec[c])
		}
		if cv > nv {
			return bad(cName, "%d correct out of n = %d", cv, nv)
		}
		if at, dup := seen[key]; dup {
			return bad("problem_id", "duplicate problem %q (first on line %d)", key, at)
		}
		seen[key] = line
		rows++
		if err := onCount(Count{Line: line, ProblemKey: key, N: nv, C: cv}); err != nil {
			if ie := (*Error)(nil); errors.As(err, &ie) && ie.File != "" {
				return err // it names the file and line already
			}
			return fmt.Errorf("%s:%d: %w", file, line, err)
		}
	}
	if rows == 0 {
		return &Error{File: file, Line: 1, Msg: "no data rows after the header"}
	}
	return nil
}

func csvErr(file string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{File: file, Line: pe.Line, Msg: "invalid CSV: " + pe.Err.Error()}
	}
	return fmt.Errorf("ingest: read %s: %w", file, err)
}

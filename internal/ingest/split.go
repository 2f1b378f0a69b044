package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// ReadState is where a read of a plain JSONL samples file stood at the start of a line (see
// Options.CheckpointEvery and Options.Resume): enough to read the file from that byte on, on
// another machine, and get what the whole read would have got.
type ReadState struct {
	Offset  int64 `json:"offset"`  // byte offset of the line in the file
	Line    int   `json:"line"`    // lines before it
	Records int   `json:"records"` // records (non-blank lines) before it
	// Seen is a format's memory of earlier records (lm-eval: each document's first filter).
	Seen map[string]string `json:"seen,omitempty"`
}

// resume reads the part of a JSONL file that r holds, from state st.
func (sr *sampleReader) resume(r io.Reader, st ReadState) error {
	if sr.doc != nil {
		return fmt.Errorf("ingest: %s is one JSON document and cannot be read in parts", sr.format)
	}
	if st.Seen != nil {
		sr.seen = st.Seen
	}
	ls := &lineSource{br: bufio.NewReaderSize(r, 64<<10), file: sr.file, lim: sr.o.Limits.withDefaults(), line: st.Line, index: st.Records - 1}
	if st.Offset == 0 { // the first part: the file's start, byte-order mark and all
		ls = newLineSource(r, sr.file, sr.o.Limits)
	}
	return sr.lines(ls, st.Offset)
}

// lineFormat reports whether f may be JSON lines (the formats that are always CSV, parquet or a
// zip are not).
func lineFormat(f Format) bool {
	return f != FormatCountsCSV && f != FormatParquet && f != FormatInspect
}

// Splittable reports whether a samples file of format f (m for FormatMapped) whose first bytes are
// head can be read in parts (Options.Resume): plain JSONL of a line-per-record layout. Compressed
// files, JSON documents and lists, CSV, parquet and zip are read whole.
func Splittable(head []byte, f Format, m *Mapping) bool {
	if !lineFormat(f) {
		return false
	}
	s, err := specFor(f, m)
	if err != nil || s.doc != nil {
		return false
	}
	for _, magic := range [][]byte{magicGzip, magicZstd, magicParquet, magicZip} {
		if bytes.HasPrefix(head, magic) {
			return false
		}
	}
	b := bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

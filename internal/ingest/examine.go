package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/parquet-go/parquet-go"
)

// Examined is what Examine finds out about a samples file.
type Examined struct {
	Format  Format
	Mapping *Mapping // the guessed mapping when Format is FormatMapped
	// Fields are paths into a record at any depth; ItemFields paths inside the elements of its
	// lists of objects (see FieldPaths). For the mapping page.
	Fields, ItemFields []string
	Preview            string // the first record as text, cut to about 2,000 bytes
}

// Examine says what a samples file is, reading as little as it can: SniffBytes of a JSON file; all
// of a parquet file (copied to a temporary file, to read the schema at its end, whose columns then
// decide its layout as a JSON record's fields do). Errors are Sniff's.
func Examine(r io.Reader, file string) (Examined, error) {
	head := make([]byte, SniffBytes)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return Examined{}, readErr(file, err)
	}
	head = head[:n]
	sn, err := sniffShape(head, file, 0)
	if err != nil {
		return Examined{}, err
	}
	if sn.format != FormatParquet {
		var ex Examined
		if sn.format != "" {
			ex.Format = sn.format
		} else if ex.Format, ex.Mapping, err = pickLayout(head, file, sn.shape); err != nil {
			return ex, err
		}
		ex.Fields, ex.ItemFields = FieldPaths(head, file)
		ex.Preview = preview(head)
		return ex, nil
	}
	in, done, err := openInput(io.MultiReader(bytes.NewReader(head), r), file, DefaultLimits)
	if err != nil {
		return Examined{}, err
	}
	defer done()
	if in.kind != kindParquet {
		return Examined{}, &Error{File: file, Msg: "not a readable parquet file"}
	}
	pf, err := openParquet(in.ra, in.size, file)
	if err != nil {
		return Examined{}, err
	}
	if err := checkParquetPages(in.ra, pf.Metadata(), file, DefaultLimits.MaxRecordBytes); err != nil {
		return Examined{}, err
	}
	sh := parquetShape(pf.Schema())
	ex := Examined{Format: FormatParquet}
	f, m, err := classify(sh, file)
	if err != nil {
		return ex, err
	}
	if f != FormatMapped {
		ex.Format = f
	} else {
		ex.Format, ex.Mapping = FormatMapped, m
	}
	ex.Fields, ex.ItemFields = shapePaths(sh)
	ex.Preview = parquetPreview(pf)
	return ex, nil
}

// preview is the first non-blank line of head (or the head of a document), cut to about 2,000 bytes.
func preview(head []byte) string {
	head = bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	line := head
	if i := bytes.IndexByte(head, '\n'); i >= 0 && head[0] != '[' && json.Valid(bytes.TrimSpace(head[:i])) {
		line = head[:i]
	}
	return truncateText(string(line), 2000)
}

// parquetPreview is the first row as JSON, cut to about 2,000 bytes.
func parquetPreview(pf *parquet.File) (s string) {
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	for _, rg := range pf.RowGroups() {
		rr := parquet.NewGenericRowGroupReader[any](rg)
		defer rr.Close()
		rows := make([]any, 1)
		if n, _ := rr.Read(rows); n == 1 {
			b, err := json.Marshal(rows[0])
			if err == nil {
				return truncateText(string(b), 2000)
			}
		}
	}
	return ""
}

// shapePaths lists a shape's fields as paths (see FieldPaths).
func shapePaths(sh *shape) (top, items []string) {
	var walk func(s *shape, prefix string, inItem bool, depth int)
	walk = func(s *shape, prefix string, inItem bool, depth int) {
		for _, k := range s.keys {
			p := prefix + escapeKey(k)
			if inItem {
				items = append(items, p)
			} else {
				top = append(top, p)
			}
			if depth >= shapeDepth || s.sub[k] == nil {
				continue
			}
			switch s.kind[k] {
			case "object":
				walk(s.sub[k], p+".", inItem, depth+1)
			case "list":
				if s.elem[k] == "object" {
					walk(s.sub[k], "", true, depth+1)
				}
			}
		}
	}
	walk(sh, "", false, 0)
	slices.Sort(top)
	slices.Sort(items)
	return slices.Compact(top), slices.Compact(items)
}

// CheckMapping reads the first records of a file's head (SniffBytes of it) with a mapping and
// returns the first error, so a mapping that names no completion, or a path that is not there, is
// refused when it is confirmed rather than when the import runs: also an optional field's path
// (correct, extracted, sample_index, finish_reason, tokens) that none of those records has, since
// a mistyped verdict path would otherwise read as a file without verdicts and Reach would grade
// every sample itself. A head that is not JSON lines (a document, parquet) is not checked (nil).
func CheckMapping(head []byte, file string, m *Mapping) error {
	if _, err := mappedSpec(m); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	sn, err := sniffShape(head, file, 0)
	if err != nil || sn.format != "" || sn.shape == nil || sn.shape.doc {
		return nil
	}
	cut := len(head) >= SniffBytes // before the byte-order mark goes: a cut head of a file with one is shorter
	head = bytes.TrimPrefix(head, utf8BOM)
	if bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("[")) {
		return nil
	}
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 && cut {
		head = head[:i+1] // the last line may be cut
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return nil
	}
	n := 0
	var seen uint8
	err = Read(bytes.NewReader(head), file, FormatMapped, m, Options{fieldsSeen: &seen, OnSample: func(s Sample) error {
		if n++; n >= 200 {
			return errEnough
		}
		return nil
	}})
	if err != nil && !errors.Is(err, errEnough) {
		return err
	}
	if n == 0 {
		return nil
	}
	for _, f := range []struct {
		key, path string
		id        fieldID
	}{{"correct", m.Correct, fCorrect}, {"extracted", m.Extracted, fExtracted}, {"sample_index", m.SampleIndex, fIndex},
		{"finish_reason", m.FinishReason, fFinish}, {"tokens", m.Tokens, fTokens}} {
		if f.path != "" && seen&(1<<f.id) == 0 {
			return &Error{File: file, Field: f.key, Msg: fmt.Sprintf("--map %s=%s: none of the first %d samples has %q (or it is null in all of them): check the path, or leave %s out if the file has none", f.key, f.path, n, f.path, f.key)}
		}
	}
	return nil
}

var errEnough = errors.New("enough samples read")

package ingest

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// A wandb Table logged by a run (TRL logs its completions as one per logging step) is saved as
// media/table/<key>_<step>_<hash>.table.json: {"columns": [names], "data": [[one value per
// column], ...]} (wandb/sdk/data_types/table.py, Table._to_table_json). Each row is read as a record
// with the columns as fields, in the layout the columns show (TRL's completions table, or any
// other known line layout).

// isWandbTable reports whether a record's shape is a wandb table file (wandb writes it on one line).
func isWandbTable(top *shape) bool {
	return top.is("columns", "list") && top.elem["columns"] == "string" && top.is("data", "list") &&
		(top.elem["data"] == "list" || top.elem["data"] == "")
}

// readWandbTable reads a .table.json: the columns first, then each row as a record.
func readWandbTable(sr *sampleReader, r io.Reader) error {
	d := newDocScanner(r, sr.file, sr.o.Limits)
	var cols []string
	inner := false
	err := d.object(func(key string) error {
		switch key {
		case "columns":
			raw, line, err := d.record()
			if err != nil {
				return err
			}
			if err := json.Unmarshal(raw, &cols); err != nil {
				return (&where{file: sr.file, line: line}).errorf("columns", "want a list of column names: %v", err)
			}
			return nil
		case "data":
			if cols == nil {
				return d.errorf(`a wandb table whose "data" comes before its "columns": Reach reads the columns first`)
			}
			var obj []byte
			return d.array(func(i int) error {
				raw, line, err := d.record()
				if err != nil {
					return err
				}
				w := where{file: sr.file, line: line, record: fmt.Sprintf("data[%d]", i)}
				var vals []string
				if err := scanArray(u2s(raw), func(_ int, v string) error { vals = append(vals, strings.Clone(v)); return nil }); err != nil || kindOf(u2s(raw)) != "list" {
					return w.errorf("", "want a row (a list of %d values), got %s", len(cols), kindOf(u2s(raw)))
				}
				if len(vals) != len(cols) {
					return w.errorf("", "a row of %d values for %d columns (%s)", len(vals), len(cols), strings.Join(cols, ", "))
				}
				obj = obj[:0]
				obj = append(obj, '{')
				for j, c := range cols {
					if j > 0 {
						obj = append(obj, ',')
					}
					obj = appendJSONString(obj, c)
					obj = append(obj, ':')
					obj = append(obj, vals[j]...)
				}
				obj = append(obj, '}')
				if !inner {
					if err := sr.tableLayout(w, cols, obj); err != nil {
						return err
					}
					inner = true
				}
				return sr.record(w, i, u2s(obj))
			})
		}
		return d.skip()
	})
	if err != nil {
		return err
	}
	if cols == nil {
		return &Error{File: sr.file, Msg: `not a wandb table: no "columns"`}
	}
	return d.end()
}

// tableLayout sets the reader's spec to the layout of the table's first row.
func (sr *sampleReader) tableLayout(w where, cols []string, row []byte) error {
	sh := &shape{}
	if err := sh.read(row); err != nil {
		return w.errorf("", "invalid JSON in the row: %v", err)
	}
	f, _, err := classify(sh, sr.file)
	s, serr := specFor(f, nil)
	if err != nil || f == FormatMapped || serr != nil || s.doc != nil {
		return w.errorf("", "a wandb table whose columns (%s) match no layout Reach knows: export it as JSONL (one object per row) and map its fields", strings.Join(cols, ", "))
	}
	doc := sr.spec.doc
	sr.spec = s
	sr.spec.doc = doc
	sr.meta.Tool = toolName(f) + " (wandb table)"
	return nil
}

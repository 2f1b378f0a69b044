package ingest

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// parquetRowsPerRead is how many rows are decoded at once: few, since a row of released
// generations can hold megabytes of text.
const parquetRowsPerRead = 16

// maxParquetFooter bounds a parquet file's footer (its schema and per-chunk
// metadata, statistics included), which is decoded whole when the file is
// opened: writers cap statistics at a few KiB (Arrow: 4 KiB), so real
// footers are kilobytes to a few megabytes; a hostile one holding a 300 MB
// cell's min and max would cost gigabytes to decode.
const maxParquetFooter = 64 << 20

// openParquet opens a parquet file, turning a panic of the decoder on a corrupt file into an *Error.
// A footer over maxParquetFooter is refused before it is read.
func openParquet(ra io.ReaderAt, size int64, file string) (pf *parquet.File, err error) {
	if size >= 12 {
		var tail [8]byte
		if _, err := ra.ReadAt(tail[:], size-8); err == nil && string(tail[4:]) == "PAR1" {
			if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > maxParquetFooter {
				return nil, &Error{File: file, Msg: fmt.Sprintf("a parquet footer (metadata) of %s, over the limit of %s: statistics of huge values? write the file without column statistics for the text columns",
					mib(n), byteSize(maxParquetFooter))}
			}
		}
	}
	defer func() {
		if r := recover(); r != nil {
			pf, err = nil, &Error{File: file, Msg: fmt.Sprintf("not a readable parquet file: %v", r)}
		}
	}()
	pf, err = parquet.OpenFile(ra, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, &Error{File: file, Msg: "not a readable parquet file: " + err.Error()}
	}
	return pf, nil
}

// readParquet reads a parquet file row group by row group, a few rows at a time; each row becomes a
// JSON record read like a JSONL line of format f (or of the format its columns show, for
// FormatParquet).
func readParquet(in *input, file string, f Format, m *Mapping, o Options) (err error) {
	pf, err := openParquet(in.ra, in.size, file)
	if err != nil {
		return err
	}
	if err := checkParquetPages(in.ra, pf.Metadata(), file, o.Limits.MaxRecordBytes); err != nil {
		return err
	}
	if f == FormatParquet {
		sh := parquetShape(pf.Schema())
		got, _, cerr := classify(sh, file)
		switch {
		case cerr != nil:
			return cerr
		case got != FormatMapped:
			f = got
		case m != nil:
			f = FormatMapped
		default:
			return &Error{File: file, Msg: fmt.Sprintf("a parquet file whose columns (%s) match no known layout: map its fields (--map or the mapping page)", strings.Join(sh.keys, ", "))}
		}
	}
	s, err := specFor(f, m)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err) // the caller's format or mapping: a plain error, naming the file it was for
	}
	if s.doc != nil {
		return &Error{File: file, Msg: fmt.Sprintf("a parquet file, but %s logs are JSON documents", Describe(f))}
	}
	sr := newSampleReader(s, file, o)
	defer func() {
		if r := recover(); r != nil {
			err = &Error{File: file, Msg: fmt.Sprintf("unreadable parquet data: %v", r)}
		}
	}()
	var (
		rows = make([]any, parquetRowsPerRead)
		buf  []byte
		row  int
	)
	for _, rg := range pf.RowGroups() {
		rr := parquet.NewGenericRowGroupReader[any](rg)
		for {
			n, rerr := rr.Read(rows)
			for i := range n {
				row++
				w := where{file: file, record: fmt.Sprintf("row %d", row)}
				var err error
				if buf, err = appendJSON(buf[:0], rows[i]); err != nil {
					return w.errorf("", "cannot be read as a record: %v", err)
				}
				rows[i] = nil
				rec := buf
				if len(rec) > o.Limits.MaxRecordBytes {
					return w.errorf("", "a row of %s, over the limit of %s (set REACH_MAX_LINE_BYTES to raise it)", byteSize(int64(len(rec))), byteSize(int64(o.Limits.MaxRecordBytes)))
				}
				if err := checkDepth(w, rec, o.Limits.MaxDepth); err != nil {
					return err
				}
				if err := sr.record(w, row-1, u2s(rec)); err != nil {
					return err
				}
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				rr.Close()
				return &Error{File: file, Record: fmt.Sprintf("row %d", row+1), Msg: "unreadable parquet data: " + rerr.Error()}
			}
		}
		rr.Close()
	}
	if row == 0 {
		return &Error{File: file, Msg: "a parquet file with no rows"}
	}
	return sr.finish()
}

// parquetShape describes a parquet schema the way Sniff describes JSON records, so one classifier
// serves both.
func parquetShape(n parquet.Node) *shape {
	sh := &shape{}
	for _, f := range n.Fields() {
		kind, elem, sub := parquetKind(f)
		sh.add(f.Name(), kind)
		if elem != "" {
			sh.elem[f.Name()] = elem
		}
		if sub != nil {
			sh.sub[f.Name()] = sub
		}
	}
	return sh
}

// parquetKind is a field's kind ("list", "object", "string", ...), a list's element kind, and the
// fields of an object or of a list's object elements.
func parquetKind(f parquet.Node) (kind, elem string, sub *shape) {
	leafKind := func(n parquet.Node) string {
		switch n.Type().Kind() {
		case parquet.Boolean:
			return "bool"
		case parquet.ByteArray, parquet.FixedLenByteArray:
			return "string"
		}
		return "number"
	}
	switch {
	case f.Leaf() && f.Repeated():
		return "list", leafKind(f), nil
	case f.Leaf():
		return leafKind(f), "", nil
	case isParquetList(f):
		el := f
		for !el.Leaf() && len(el.Fields()) == 1 && (el == f || el.Repeated()) {
			el = el.Fields()[0]
		}
		if el.Leaf() {
			return "list", leafKind(el), nil
		}
		return "list", "object", parquetShape(el)
	case f.Repeated():
		return "list", "object", parquetShape(f)
	}
	return "object", "", parquetShape(f)
}

func isParquetList(n parquet.Node) bool {
	if lt := n.Type().LogicalType(); lt != nil {
		if _, ok := lt.Value.(*format.ListType); ok {
			return true
		}
	}
	// A legacy list: a group whose only field is a repeated "list"/"array"/"bag" group.
	fs := n.Fields()
	return len(fs) == 1 && fs[0].Repeated() && slices.Contains([]string{"list", "array", "bag", "element"}, fs[0].Name())
}

// appendJSON writes a value read by parquet-go's GenericReader[any] (maps, lists, strings, numbers,
// booleans, nil, bytes) as JSON: the types a parquet row holds, without encoding/json's reflection
// (which cost a quarter of a parquet import). Other values go through encoding/json.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendJSONString(b, x), nil
	case []byte:
		return appendJSONString(b, string(x)), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case float64:
		return appendJSONFloat(b, x, 64), nil
	case float32:
		return appendJSONFloat(b, float64(x), 32), nil
	case map[string]any:
		b = append(b, '{')
		first := true
		for k, e := range x {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendJSONString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	}
	j, err := json.Marshal(v)
	return append(b, j...), err
}

func appendJSONFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

// appendJSONString quotes s as a JSON string; invalid UTF-8 becomes U+FFFD, as encoding/json does.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, `\u00`...)
				b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += n
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// checkParquetPages refuses a file with a page that decodes to more than
// limit bytes (REACH_MAX_LINE_BYTES), from the page headers alone, before
// any page is decompressed or decoded: a page holds whole values, so one
// 300 MB cell is a page of at least 300 MB, and decoding it took 25 s and
// 2.1 GB before the row was found too long. Writers cut pages at about
// 1 MiB, so real files are far below the limit. A header that cannot be
// read is left to the decoder, which names it.
func checkParquetPages(ra io.ReaderAt, md *format.FileMetaData, file string, limit int) error {
	var proto thrift.CompactProtocol
	for gi, rg := range md.RowGroups {
		for _, cc := range rg.Columns {
			m := cc.MetaData
			pos := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < pos {
				pos = m.DictionaryPageOffset
			}
			end := pos + m.TotalCompressedSize
			for pos < end {
				sec := io.NewSectionReader(ra, pos, end-pos)
				br := bufio.NewReaderSize(sec, 1024)
				// The sizes come first in the header; its statistics after
				// them may hold the huge value itself: read the sizes alone
				// before decoding the header whole.
				head, _ := br.Peek(32)
				if size, ok := pageHeaderSize(head); ok && int64(size) > int64(limit) {
					return &Error{File: file, Record: fmt.Sprintf("row group %d", gi+1), Field: strings.Join(m.PathInSchema, "."),
						Msg: fmt.Sprintf("a parquet page of %s once decoded (it holds a value of up to that size), over the limit of %s for one row (set REACH_MAX_LINE_BYTES to raise it)",
							mib(int64(size)), byteSize(int64(limit)))}
				}
				var h format.PageHeader
				if err := thrift.NewDecoder(proto.NewReader(br)).Decode(&h); err != nil {
					return nil
				}
				read, _ := sec.Seek(0, io.SeekCurrent)
				if int64(h.UncompressedPageSize) > int64(limit) {
					return &Error{File: file, Record: fmt.Sprintf("row group %d", gi+1), Field: strings.Join(m.PathInSchema, "."),
						Msg: fmt.Sprintf("a parquet page of %s once decoded (it holds a value of up to that size), over the limit of %s for one row (set REACH_MAX_LINE_BYTES to raise it)",
							mib(int64(h.UncompressedPageSize)), byteSize(int64(limit)))}
				}
				if h.CompressedPageSize < 0 {
					return nil
				}
				pos += read - int64(br.Buffered()) + int64(h.CompressedPageSize)
			}
		}
	}
	return nil
}

// pageHeaderSize reads a thrift-compact PageHeader's uncompressed_page_size
// (field 2, an i32) from the first bytes of the header, without decoding
// the rest; ok is false when the header does not start as writers write it
// (field 1 then 2, in order).
func pageHeaderSize(b []byte) (int32, bool) {
	field := int16(0)
	for len(b) > 0 {
		h := b[0]
		b = b[1:]
		delta, typ := int16(h>>4), h&0x0f
		if delta == 0 || typ != 5 { // long-form field ids and non-i32 fields are not what writers put first
			return 0, false
		}
		field += delta
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		val := int32(uint32(v>>1) ^ -uint32(v&1)) // zigzag
		switch {
		case field == 2:
			return val, true
		case field > 2:
			return 0, false
		}
	}
	return 0, false
}

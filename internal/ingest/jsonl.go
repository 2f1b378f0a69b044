package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// lineSource yields the lines of a JSONL stream one at a time, each whole in a reused buffer: the
// buffer grows to the longest line and no further (a line over Limits.MaxRecordBytes is refused
// before it is read on).
type lineSource struct {
	br    *bufio.Reader
	file  string
	lim   Limits
	buf   []byte
	line  int   // 1-based number of the line last returned
	index int   // 0-based among the non-blank lines, of the line last returned (-1 before the first)
	off   int64 // bytes consumed from the stream (a byte-order mark included)
}

func newLineSource(r io.Reader, file string, lim Limits) *lineSource {
	br := bufio.NewReaderSize(r, 64<<10)
	ls := &lineSource{br: br, file: file, lim: lim.withDefaults(), index: -1}
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
		ls.off = int64(len(utf8BOM))
	}
	return ls
}

// more reports whether a byte is left to read (a failed read counts as more: next reports it).
func (ls *lineSource) more() bool {
	_, err := ls.br.Peek(1)
	return err != io.EOF
}

// next returns the next non-blank line, trimmed, valid for the caller until the following call; io.EOF
// at the end. A line over the limit is an *Error; a failed read a plain wrapped error.
func (ls *lineSource) next() ([]byte, error) {
	for {
		if _, err := ls.br.Peek(1); err != nil {
			if err == io.EOF {
				return nil, io.EOF
			}
			return nil, readErr(ls.file, err)
		}
		ls.line++
		if err := ls.readLine(); err != nil {
			return nil, err
		}
		if l := bytes.TrimSpace(ls.buf); len(l) > 0 {
			ls.index++
			return l, nil
		}
	}
}

// readErr wraps a failed read: an *Error (bad compressed data) as it is, anything else as a plain
// error, since the file may be fine.
func readErr(file string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return fmt.Errorf("ingest: read %s: %w", file, err)
}

// readLine reads the next line into ls.buf. The line's bytes go straight into ls.buf while it has
// room (kept from earlier lines, so a file of long lines is copied once); a line longer than that
// is read on in 1 MiB blocks and assembled once in a buffer of its exact length, so reading a line
// of L bytes needs at most about 2L, not the 4L or so that growing one slice by appending leaves
// behind as garbage.
func (ls *lineSource) readLine() error {
	ls.buf = ls.buf[:0]
	tooLong := func() error {
		return &Error{File: ls.file, Line: ls.line, Msg: fmt.Sprintf("line longer than the limit of %s (set REACH_MAX_LINE_BYTES to raise it)", byteSize(int64(ls.lim.MaxRecordBytes)))}
	}
	const block = 1 << 20
	var blocks [][]byte // the part of the line beyond ls.buf's capacity
	total := 0
	for {
		chunk, err := ls.br.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull && err != io.EOF {
			return readErr(ls.file, err)
		}
		ls.off += int64(len(chunk))
		if total += len(chunk); total > ls.lim.MaxRecordBytes {
			return tooLong()
		}
		// A line that fits the bufio buffer (err != ErrBufferFull on the first read), or whose bytes
		// still fit the buffer kept from earlier lines, is appended directly.
		if blocks == nil && (len(ls.buf)+len(chunk) <= cap(ls.buf) || (len(ls.buf) == 0 && err != bufio.ErrBufferFull)) {
			ls.buf = append(ls.buf, chunk...)
		} else {
			for len(chunk) > 0 {
				if len(blocks) == 0 || len(blocks[len(blocks)-1]) == block {
					blocks = append(blocks, make([]byte, 0, block))
				}
				last := &blocks[len(blocks)-1]
				n := min(len(chunk), block-len(*last))
				*last = append(*last, chunk[:n]...)
				chunk = chunk[n:]
			}
		}
		if err != bufio.ErrBufferFull {
			break
		}
	}
	if blocks != nil {
		line := make([]byte, 0, total)
		line = append(line, ls.buf...)
		ls.buf = nil // let the old buffer go
		for i, b := range blocks {
			line = append(line, b...)
			blocks[i] = nil
		}
		ls.buf = line
	}
	return nil
}

// byteSize renders a byte count for messages: "64 MiB", "512 KiB", "100 B".
func byteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// where says where a record is, for errors: a line of a file or a named record.
type where struct {
	file   string
	line   int
	record string
}

func (w where) errorf(field, format string, args ...any) *Error {
	return &Error{File: w.file, Line: w.line, Record: w.record, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// checkJSON checks that rec is one valid JSON object, UTF-8, nested at most lim.MaxDepth deep, in
// one pass for depth and one for syntax; the error names the byte (column) at fault.
func checkJSON(w where, rec []byte, lim Limits) error {
	if !utf8.Valid(rec) {
		off := 0
		for off < len(rec) {
			r, n := utf8.DecodeRune(rec[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return w.errorf("", "invalid UTF-8 at byte %d (0x%02x): JSON text must be UTF-8", off+1, rec[off])
	}
	if err := checkDepth(w, rec, lim.MaxDepth); err != nil {
		return err
	}
	// gjson's validator agrees with encoding/json's (FuzzValid) and is 2-3x faster; depth is
	// bounded above, so its recursion is too. encoding/json explains a failure.
	if !gjson.ValidBytes(rec) {
		return syntaxError(w, rec)
	}
	if rec[0] != '{' {
		return w.errorf("", "want one JSON object per record, got %s", kindOf(u2s(rec)))
	}
	return nil
}

// checkDepth refuses nesting deeper than max without recursion, so a line of 10,000 '[' costs
// microseconds. Strings are skipped with IndexByte.
func checkDepth(w where, b []byte, max int) error {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for {
				j := bytes.IndexByte(b[i+1:], '"')
				if j < 0 {
					return nil // unterminated: json.Valid reports it
				}
				i += j + 1
				k := i - 1
				for k >= 0 && b[k] == '\\' {
					k--
				}
				if (i-1-k)%2 == 0 {
					break
				}
			}
		case '{', '[':
			if depth++; depth > max {
				return w.errorf("", "JSON nested deeper than %d levels (at byte %d)", max, i+1)
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// syntaxError explains why rec is not valid JSON, with the byte offset encoding/json found.
func syntaxError(w where, rec []byte) error {
	dec := json.NewDecoder(bytes.NewReader(rec))
	var v json.RawMessage
	err := dec.Decode(&v)
	var syn *json.SyntaxError
	switch {
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return w.errorf("", "truncated JSON: the line ends inside a value")
	case errors.As(err, &syn):
		return w.errorf("", "invalid JSON at byte %d: %s", syn.Offset, syn.Error())
	case err == nil:
		if _, err := dec.Token(); err != io.EOF {
			return w.errorf("", "more than one JSON value on the line")
		}
	}
	return w.errorf("", "invalid JSON")
}

// u2s views b as a string without copying; b must not change while the string is used.
func u2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// kv is one field of a JSON object, both parts aliasing the record.
type kv struct{ key, val string }

// topFields splits a valid JSON object into its fields (appended to dst), refusing a key that
// appears twice (encoding/json would keep the last, gjson the first).
func topFields(w where, obj string, dst []kv) ([]kv, error) {
	err := scanObject(obj, func(key, val string) error {
		if strings.IndexByte(key, '\\') >= 0 {
			key = unquote(`"` + key + `"`)
		}
		for _, f := range dst {
			if f.key == key {
				return w.errorf(key, "field appears twice in the object")
			}
		}
		dst = append(dst, kv{key, val})
		return nil
	})
	return dst, err
}

// scanObject calls fn with each top-level field of obj, which must be a valid JSON object. key is
// the raw key between its quotes.
func scanObject(obj string, fn func(key, val string) error) error {
	i := skipSpace(obj, 0) + 1 // past '{'
	for {
		i = skipSpace(obj, i)
		switch obj[i] {
		case '}':
			return nil
		case ',':
			i = skipSpace(obj, i+1)
		}
		end := stringEnd(obj, i)
		key := obj[i+1 : end-1]
		i = skipSpace(obj, skipSpace(obj, end)+1) // past ':'
		vend := valueEnd(obj, i)
		if err := fn(key, obj[i:vend]); err != nil {
			return err
		}
		i = vend
	}
}

// scanArray calls fn with each element of arr, a valid JSON list.
func scanArray(arr string, fn func(i int, val string) error) error {
	i := skipSpace(arr, 1)
	for n := 0; arr[i] != ']'; n++ {
		end := valueEnd(arr, i)
		if err := fn(n, arr[i:end]); err != nil {
			return err
		}
		if i = skipSpace(arr, end); arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
	return nil
}

// arrayLen counts the elements of a valid JSON list.
func arrayLen(arr string) int {
	n := 0
	_ = scanArray(arr, func(int, string) error { n++; return nil })
	return n
}

func skipSpace(b string, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// stringEnd returns the index just past the closing quote of the string starting at b[i]: the
// first quote not escaped by an odd run of backslashes (IndexByte is vectorised; escapes are rare).
func stringEnd(b string, i int) int {
	for j := i + 1; ; {
		j += strings.IndexByte(b[j:], '"')
		k := j - 1
		for b[k] == '\\' {
			k--
		}
		if (j-1-k)%2 == 0 {
			return j + 1
		}
		j++
	}
}

// valueEnd returns the index just past the value starting at b[i].
func valueEnd(b string, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; ; j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}

// kindOf names a raw JSON value's type from its first byte.
func kindOf(raw string) string {
	raw = strings.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "list"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// unquote decodes a valid JSON string literal in one pass. Unpaired surrogates become U+FFFD, as
// encoding/json does; the result never aliases lit.
func unquote(lit string) string {
	in := lit[1 : len(lit)-1]
	if strings.IndexByte(in, '\\') < 0 {
		if utf8.ValidString(in) {
			return strings.Clone(in)
		}
		return fixUTF8([]byte(in))
	}
	out := make([]byte, 0, len(in))
	for {
		i := strings.IndexByte(in, '\\')
		if i < 0 {
			out = append(out, in...)
			break
		}
		out = append(out, in[:i]...)
		c := in[i+1]
		in = in[i+2:]
		switch c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(in)
			in = in[4:]
			if utf16.IsSurrogate(r) {
				r2 := unicode.ReplacementChar
				if len(in) >= 6 && in[0] == '\\' && in[1] == 'u' {
					r2 = hex4(in[2:])
				}
				if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
					r = dec
					in = in[6:]
				} else {
					r = unicode.ReplacementChar
				}
			}
			out = utf8.AppendRune(out, r)
		default: // '"', '\\', '/'
			out = append(out, c)
		}
	}
	if !utf8.Valid(out) {
		return fixUTF8(out)
	}
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// fixUTF8 replaces each invalid byte with U+FFFD, as encoding/json does.
func fixUTF8(b []byte) string {
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		out = utf8.AppendRune(out, r) // RuneError for an invalid byte (n == 1)
		b = b[n:]
	}
	return string(out)
}

// hex4 reads the 4 hex digits of a \u escape (already validated).
func hex4(b string) rune {
	var r rune
	for _, c := range []byte(b[:4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// normNumber renders a JSON number literal as text: integral values without fraction or exponent
// ("27.0" and "2.7e1" -> "27", so an AMC answer stored as a float matches "27"), anything else as written.
func normNumber(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		return strings.Clone(lit)
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
		return strings.Clone(lit)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// str reads a JSON string; null reads as "".
func (w where) str(field, raw string) (string, error) {
	switch k := kindOf(raw); k {
	case "null":
		return "", nil
	case "string":
		return unquote(raw), nil
	default:
		return "", w.errorf(field, "want a string, got %s", k)
	}
}

// text reads a string, or a number or bool as its text (numbers normalised, see normNumber), or a
// list of strings joined by newlines (a prompt given as chat messages' contents); null is "".
func (w where) text(field, raw string) (string, error) {
	switch k := kindOf(raw); k {
	case "number":
		return normNumber(raw), nil
	case "bool":
		return strings.Clone(raw), nil
	case "list":
		var b strings.Builder
		err := scanArray(raw, func(i int, v string) error {
			s, err := w.text(fmt.Sprintf("%s[%d]", field, i), v)
			if i > 0 && s != "" {
				b.WriteByte('\n')
			}
			b.WriteString(s)
			return err
		})
		return b.String(), err
	case "object":
		return "", w.errorf(field, "want a string or number, got object")
	}
	return w.str(field, raw)
}

// key reads a problem id: a non-empty string, or a number as its decimal text.
func (w where) key(field, raw string) (string, error) {
	switch k := kindOf(raw); k {
	case "number":
		return normNumber(raw), nil
	case "string":
		s := unquote(raw)
		if strings.TrimSpace(s) == "" {
			return "", w.errorf(field, "empty problem id")
		}
		return s, nil
	default:
		return "", w.errorf(field, "want a problem id (string or number), got %s", k)
	}
}

// verdictWords are the strings read as verdicts (lower case): Inspect's C/I/N, pass/fail, ...
var verdictWords = map[string]bool{
	"c": true, "i": false, "n": false, "correct": true, "incorrect": false, "pass": true, "passed": true,
	"fail": false, "failed": false, "true": true, "false": false, "1": true, "0": false,
	"-1": false,
}

// verdict reads a verdict: a bool; a number 1 (correct), 0 or -1 (wrong: the ±1 reward of verl/DAPO);
// a word such as "C"/"I" (Inspect), "pass"/"fail", "correct"/"incorrect". With threshold > 0 a
// number is a score, correct when >= threshold. null is nil (no verdict). Anything else, e.g. a
// score of 0.5 without a threshold or Inspect's partial "P", is an error saying so.
func (w where) verdict(field, raw string, threshold float64) (*bool, error) {
	var v bool
	switch k := kindOf(raw); k {
	case "null":
		return nil, nil
	case "bool":
		v = raw == "true"
	case "number":
		f, err := strconv.ParseFloat(raw, 64)
		switch {
		case err != nil:
			return nil, w.errorf(field, "want a verdict, got %s", raw)
		case threshold > 0:
			v = f >= threshold
		case f == 1 || f == 0 || f == -1:
			v = f == 1
		default:
			return nil, w.errorf(field, "want a verdict (true/false, 1/0, ±1), got the score %s: give a threshold for scores (threshold=…)", raw)
		}
	case "string":
		s := strings.ToLower(strings.TrimSpace(unquote(raw)))
		b, ok := verdictWords[s]
		if !ok {
			if f, err := strconv.ParseFloat(s, 64); err == nil && threshold > 0 {
				b, ok = f >= threshold, true
			} else if s == "p" {
				return nil, w.errorf(field, "partial credit %q is not a verdict: give a threshold (threshold=…) to count it", raw)
			}
		}
		if !ok {
			return nil, w.errorf(field, "want a verdict (true/false, 1/0, ±1, C/I, pass/fail), got %.40s", raw)
		}
		v = b
	default:
		return nil, w.errorf(field, "want a verdict (true/false, 1/0, ±1, C/I, pass/fail), got %s", k)
	}
	return &v, nil
}

// count reads a non-negative integer (3 or 3.0).
func (w where) count(field, raw string) (int, error) {
	if k := kindOf(raw); k != "number" {
		return 0, w.errorf(field, "want a non-negative integer, got %s", k)
	}
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, w.errorf(field, "want a non-negative integer, got %s", raw)
	}
	return int(f), nil
}

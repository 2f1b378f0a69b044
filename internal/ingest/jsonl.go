package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxLineBytes bounds one JSONL line (256 MiB). A variable so tests can lower it.
var maxLineBytes = 256 << 20

var (
	errLineTooLong = errors.New("line too long")
	utf8BOM        = []byte{0xEF, 0xBB, 0xBF}
)

// lineReader reads one line (up to and including its '\n') from br, then reports io.EOF. It lets a
// json.Decoder stream within a line, so a huge line is never held as one []byte.
type lineReader struct {
	br   *bufio.Reader
	n    int   // bytes handed out so far
	done bool  // the newline (or the end of input) was reached
	err  error // an underlying read error, or errLineTooLong
}

func (l *lineReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if l.done {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if _, err := l.br.Peek(1); err != nil {
		l.done = true
		if err == io.EOF {
			return 0, io.EOF
		}
		l.err = err
		return 0, err
	}
	b, _ := l.br.Peek(min(l.br.Buffered(), len(p)))
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
		l.done = true
	}
	if l.n+len(b) > maxLineBytes {
		l.err = errLineTooLong
		return 0, l.err
	}
	n := copy(p, b)
	_, _ = l.br.Discard(n) // cannot fail: n bytes are buffered
	l.n += n
	return n, nil
}

// lineDec decodes the one JSON object on a JSONL line, and knows where it is for error messages.
type lineDec struct {
	*json.Decoder
	lr    *lineReader
	file  string
	line  int // 1-based line in the file
	index int // 0-based among non-blank lines (the Qwen evaluator's idx)
}

// newLineBuffer buffers r for line reading and drops a leading UTF-8 BOM.
func newLineBuffer(r io.Reader) *bufio.Reader {
	br := bufio.NewReaderSize(r, 64<<10)
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
	return br
}

var errEmptyJSONL = "empty file: no JSON lines"

// wholeLineMax is the longest line read whole into memory (the fast path); longer lines are
// token-streamed so their raw text is never held next to what is decoded from it. A variable so
// tests can lower it.
var wholeLineMax = 4 << 20

// eachLine calls, once per non-blank line of r in order, either whole(d, obj) with the line's bytes,
// when the line is at most wholeLineMax bytes and a valid JSON object, or stream(d) with a decoder on
// the line whose '{' has been read (stream must consume the object): for longer lines, and for
// invalid ones, where the decoder finds exactly what is wrong. With whole == nil every line is
// streamed. Blank lines are skipped but counted for line numbers; a UTF-8 BOM is dropped; a file with
// no JSON line is an *Error.
func eachLine(r io.Reader, file string, whole func(d *lineDec, obj []byte) error, stream func(d *lineDec) error) error {
	br := newLineBuffer(r)
	limit := wholeLineMax
	if whole == nil {
		limit = 0
	}
	var buf []byte
	line, index := 0, 0
	for {
		if _, err := br.Peek(1); err != nil {
			if err == io.EOF {
				break
			}
			return fmt.Errorf("ingest: read %s: %w", file, err)
		}
		line++
		d := &lineDec{file: file, line: line, index: index}
		var complete, blank bool
		var err error
		if buf, complete, err = readLine(br, buf[:0], limit); err != nil {
			if err == errLineTooLong {
				return d.errorf("", "line longer than %d bytes", maxLineBytes)
			}
			return fmt.Errorf("ingest: read %s: %w", file, err)
		}
		if complete {
			obj := bytes.TrimSpace(buf)
			switch {
			case len(obj) == 0:
				blank = true
			case obj[0] == '{' && json.Valid(obj):
				err = whole(d, obj)
			default:
				blank, err = d.stream(bytes.NewReader(obj), nil, stream)
			}
		} else { // a long line: decode what was read, then the rest of the line from br
			lr := &lineReader{br: br, n: len(buf)}
			blank, err = d.stream(io.MultiReader(bytes.NewReader(buf), lr), lr, stream)
		}
		if err != nil {
			return err
		}
		if !blank {
			index++
		}
	}
	if index == 0 {
		return &Error{File: file, Msg: errEmptyJSONL}
	}
	return nil
}

// readLine appends the next line of br (with its '\n') to buf until the line ends (complete) or
// buf holds limit bytes or more (not complete; the rest of the line is still in br).
func readLine(br *bufio.Reader, buf []byte, limit int) (_ []byte, complete bool, _ error) {
	for len(buf) < limit {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > maxLineBytes {
			return buf, false, errLineTooLong
		}
		buf = append(buf, chunk...)
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil, io.EOF:
			return buf, true, nil
		default:
			return buf, false, err
		}
	}
	return buf, false, nil
}

// stream decodes one line from rd as one JSON object, handing it to fn after its '{'. lr, if not
// nil, is the reader of the line's rest, whose read errors are reported as such.
func (d *lineDec) stream(rd io.Reader, lr *lineReader, fn func(d *lineDec) error) (blank bool, err error) {
	d.lr = lr
	d.Decoder = json.NewDecoder(rd)
	tok, err := d.Token()
	if err == io.EOF && (lr == nil || lr.err == nil) {
		return true, nil
	}
	if err != nil {
		return false, d.jsonErr("", err)
	}
	if tok != json.Delim('{') {
		return false, d.errorf("", "want one JSON object per line, got %s", tokenKind(tok))
	}
	if err := fn(d); err != nil {
		return false, err
	}
	if tok, err := d.Token(); err != io.EOF {
		if err != nil {
			return false, d.jsonErr("", err)
		}
		return false, d.errorf("", "more than one JSON value on the line (next is %s)", tokenKind(tok))
	}
	return false, nil
}

// scanObject calls fn with each top-level field of obj, which must be a valid JSON object (checked
// with json.Valid first, so the scan can trust the syntax). key is the raw key between its quotes.
func scanObject(obj []byte, fn func(key, val []byte) error) error {
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

// scanArray calls fn with each element of arr, a list from a valid JSON object.
func scanArray(arr []byte, fn func(i int, val []byte) error) error {
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

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// stringEnd returns the index just past the closing quote of the string starting at b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; ; {
		j += bytes.IndexAny(b[j:], `"\`)
		if b[j] == '\\' {
			j += 2
			continue
		}
		return j + 1
	}
}

// valueEnd returns the index just past the value starting at b[i].
func valueEnd(b []byte, i int) int {
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

func (d *lineDec) errorf(field, format string, args ...any) error {
	return &Error{File: d.file, Line: d.line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// jsonErr turns a decoder error into an *Error, except a failed read of the underlying input, which
// is not the file's fault and comes back as a plain wrapped error.
func (d *lineDec) jsonErr(field string, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var readErr error
	if d.lr != nil {
		readErr = d.lr.err
	}
	switch {
	case errors.Is(readErr, errLineTooLong):
		return d.errorf(field, "line longer than %d bytes", maxLineBytes)
	case readErr != nil:
		return fmt.Errorf("ingest: read %s: %w", d.file, readErr)
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return d.errorf(field, "truncated JSON: the line ends inside a value")
	case errors.As(err, &syn):
		return d.errorf(field, "invalid JSON: %s", syn.Error())
	case errors.As(err, &typ):
		return d.errorf(field, "want %s, got JSON %s", typ.Type, typ.Value)
	}
	return d.errorf(field, "%s", err.Error())
}

// object walks the fields of an object whose '{' has been read, calling fn(key) for each; fn must
// consume the value. A key that appears twice is an error (encoding/json would keep the last).
func (d *lineDec) object(field string, fn func(key string) error) error {
	var keys []string
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return d.jsonErr(field, err)
		}
		key := t.(string) // the decoder only yields string keys in key position
		if slices.Contains(keys, key) {
			return d.errorf(joinField(field, key), "field appears twice in the object")
		}
		keys = append(keys, key)
		if err := fn(key); err != nil {
			return err
		}
	}
	if _, err := d.Token(); err != nil {
		return d.jsonErr(field, err)
	}
	return nil
}

// array reads a list value element by element: fn(i) must consume element i.
func (d *lineDec) array(field string, fn func(i int) error) error {
	t, err := d.Token()
	if err != nil {
		return d.jsonErr(field, err)
	}
	if t != json.Delim('[') {
		return d.errorf(field, "want a list, got %s", tokenKind(t))
	}
	for i := 0; d.More(); i++ {
		if err := fn(i); err != nil {
			return err
		}
	}
	if _, err := d.Token(); err != nil {
		return d.jsonErr(field, err)
	}
	return nil
}

// raw reads the next value whole. Only for values that are small or kept anyway.
func (d *lineDec) raw(field string) (json.RawMessage, error) {
	var m json.RawMessage
	if err := d.Decode(&m); err != nil {
		return nil, d.jsonErr(field, err)
	}
	return m, nil
}

// skip consumes the next value token by token, so an unwanted big list is never buffered whole.
func (d *lineDec) skip(field string) error {
	depth := 0
	for {
		t, err := d.Token()
		if err != nil {
			return d.jsonErr(field, err)
		}
		if dl, ok := t.(json.Delim); ok {
			if dl == '{' || dl == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// lookup finds a top-level ("qid") or one-level dotted ("175b_verification.solution") path in obj.
func (d *lineDec) lookup(obj map[string]json.RawMessage, path, prefix string) (json.RawMessage, bool, error) {
	head, tail, dotted := strings.Cut(path, ".")
	raw, ok := obj[head]
	if !ok || !dotted {
		return raw, ok, nil
	}
	if kindOf(raw) != "object" {
		return nil, false, d.errorf(prefix+head, "want an object (mapping names %q), got %s", path, kindOf(raw))
	}
	var sub map[string]json.RawMessage
	if err := json.Unmarshal(raw, &sub); err != nil {
		return nil, false, d.errorf(prefix+head, "invalid JSON: %v", err)
	}
	raw, ok = sub[tail]
	return raw, ok, nil
}

// kindOf names a raw JSON value's type from its first byte.
func kindOf(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
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

func tokenKind(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '{':
			return "object"
		case '[':
			return "list"
		}
		return strconv.Quote(v.String())
	case string:
		return "string"
	case float64, json.Number:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", t)
}

func joinField(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// str reads a JSON string; null reads as "".
func (d *lineDec) str(field string, raw json.RawMessage) (string, error) {
	switch k := kindOf(raw); k {
	case "null":
		return "", nil
	case "string":
		return unquote(bytes.TrimSpace(raw)), nil
	default:
		return "", d.errorf(field, "want a string, got %s", k)
	}
}

// unquote decodes a JSON string literal that a decoder or json.Valid has already checked, in one
// pass (json.Unmarshal would validate it again). Like encoding/json, it turns invalid UTF-8 and
// unpaired surrogates into U+FFFD.
func unquote(lit []byte) string {
	in := lit[1 : len(lit)-1]
	if bytes.IndexByte(in, '\\') < 0 {
		if utf8.Valid(in) {
			return string(in)
		}
		return fixUTF8(in)
	}
	out := make([]byte, 0, len(in))
	for {
		i := bytes.IndexByte(in, '\\')
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
	return string(out)
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
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
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

// text reads a string, or a number or bool as its text (numbers normalised, see normNumber); null is "".
func (d *lineDec) text(field string, raw json.RawMessage) (string, error) {
	switch k := kindOf(raw); k {
	case "number":
		return normNumber(string(bytes.TrimSpace(raw))), nil
	case "bool":
		return string(bytes.TrimSpace(raw)), nil
	case "list", "object":
		return "", d.errorf(field, "want a string or number, got %s", k)
	}
	return d.str(field, raw)
}

// key reads a problem id: a non-empty string, or a number as its decimal text.
func (d *lineDec) key(field string, raw json.RawMessage) (string, error) {
	switch k := kindOf(raw); k {
	case "number":
		return normNumber(string(bytes.TrimSpace(raw))), nil
	case "string":
		s, err := d.str(field, raw)
		if err == nil && strings.TrimSpace(s) == "" {
			err = d.errorf(field, "empty problem id")
		}
		return s, err
	default:
		return "", d.errorf(field, "want a problem id (string or number), got %s", k)
	}
}

// verdict reads a bool, or a number 0 or 1 (some evaluators write scores as 0/1); null is nil.
func (d *lineDec) verdict(field string, raw json.RawMessage) (*bool, error) {
	var v bool
	switch k := kindOf(raw); k {
	case "null":
		return nil, nil
	case "bool":
		v = bytes.Equal(bytes.TrimSpace(raw), []byte("true"))
	case "number":
		f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
		if err != nil || (f != 0 && f != 1) {
			return nil, d.errorf(field, "want a verdict (true/false or 0/1), got %s", raw)
		}
		v = f == 1
	default:
		return nil, d.errorf(field, "want a verdict (true/false or 0/1), got %s", k)
	}
	return &v, nil
}

// count reads a non-negative integer (3 or 3.0).
func (d *lineDec) count(field string, raw json.RawMessage) (int, error) {
	if k := kindOf(raw); k != "number" {
		return 0, d.errorf(field, "want a non-negative integer, got %s", k)
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, d.errorf(field, "want a non-negative integer, got %s", raw)
	}
	return int(f), nil
}

// normNumber renders a JSON number literal as text: integral values without fraction or exponent
// ("27.0" and "2.7e1" -> "27", so an AMC answer stored as a float matches "27"), anything else as written.
func normNumber(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		return lit
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
		return lit
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

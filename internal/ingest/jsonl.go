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

// eachObject calls fn once per non-blank line of r, in order, with a decoder whose first token (the
// line's '{') has been read; fn must consume the rest of that object. Blank lines are skipped but
// counted for line numbers; a UTF-8 BOM is dropped. A file with no JSON line is an *Error.
func eachObject(r io.Reader, file string, fn func(d *lineDec) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
	line, index := 0, 0
	for {
		if _, err := br.Peek(1); err != nil {
			if err == io.EOF {
				break
			}
			return fmt.Errorf("ingest: read %s: %w", file, err)
		}
		line++
		lr := &lineReader{br: br}
		d := &lineDec{Decoder: json.NewDecoder(lr), lr: lr, file: file, line: line, index: index}
		tok, err := d.Token()
		if err == io.EOF && lr.err == nil {
			continue // blank line
		}
		if err != nil {
			return d.jsonErr("", err)
		}
		if tok != json.Delim('{') {
			return d.errorf("", "want one JSON object per line, got %s", tokenKind(tok))
		}
		if err := fn(d); err != nil {
			return err
		}
		if tok, err := d.Token(); err != io.EOF {
			if err != nil {
				return d.jsonErr("", err)
			}
			return d.errorf("", "more than one JSON value on the line (next is %s)", tokenKind(tok))
		}
		index++
	}
	if index == 0 {
		return &Error{File: file, Msg: "empty file: no JSON lines"}
	}
	return nil
}

func (d *lineDec) errorf(field, format string, args ...any) error {
	return &Error{File: d.file, Line: d.line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// jsonErr turns a decoder error into an *Error, except a failed read of the underlying input, which
// is not the file's fault and comes back as a plain wrapped error.
func (d *lineDec) jsonErr(field string, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(d.lr.err, errLineTooLong):
		return d.errorf(field, "line longer than %d bytes", maxLineBytes)
	case d.lr.err != nil:
		return fmt.Errorf("ingest: read %s: %w", d.file, d.lr.err)
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
	switch kindOf(raw) {
	case "null":
		return "", nil
	case "string":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", d.errorf(field, "invalid JSON string: %v", err)
		}
		return s, nil
	}
	return "", d.errorf(field, "want a string, got %s", kindOf(raw))
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

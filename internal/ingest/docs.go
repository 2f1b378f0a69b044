package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// docScanner walks a JSON document that may be far larger than memory (an Inspect .json log, an
// OpenCompass predictions file, a JSON list of records) without a tree: it reads keys and skips
// values token by token, and reads whole only the values it is asked for, each bounded by
// Limits.MaxRecordBytes and Limits.MaxDepth. It counts lines, so errors name the line.
type docScanner struct {
	br   *bufio.Reader
	file string
	lim  Limits
	line int
	buf  []byte
}

func newDocScanner(r io.Reader, file string, lim Limits) *docScanner {
	br := bufio.NewReaderSize(r, 64<<10)
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
	return &docScanner{br: br, file: file, lim: lim.withDefaults(), line: 1}
}

func (d *docScanner) errorf(format string, args ...any) *Error {
	return &Error{File: d.file, Line: d.line, Msg: fmt.Sprintf(format, args...)}
}

// peek returns the next byte that is not white space, without consuming it.
func (d *docScanner) peek() (byte, error) {
	for {
		c, err := d.br.ReadByte()
		if err == io.EOF {
			return 0, d.errorf("truncated JSON: the file ends inside the document")
		}
		if err != nil {
			return 0, readErr(d.file, err)
		}
		switch c {
		case '\n':
			d.line++
			continue
		case ' ', '\t', '\r':
			continue
		}
		_ = d.br.UnreadByte()
		return c, nil
	}
}

// expect consumes the next non-space byte, which must be c.
func (d *docScanner) expect(c byte) error {
	got, err := d.peek()
	if err != nil {
		return err
	}
	if got != c {
		return d.errorf("invalid JSON: want %q, got %q", c, got)
	}
	_, _ = d.br.ReadByte()
	return nil
}

// next consumes a ',' between members or reports the end of the container (closing byte consumed).
func (d *docScanner) next(closer byte, first bool) (more bool, err error) {
	c, err := d.peek()
	if err != nil {
		return false, err
	}
	if c == closer {
		_, _ = d.br.ReadByte()
		return false, nil
	}
	if !first {
		if c != ',' {
			return false, d.errorf("invalid JSON: want ',' or %q, got %q", closer, c)
		}
		_, _ = d.br.ReadByte()
	}
	return true, nil
}

// object calls fn for each key of the object that starts next; fn must consume the value.
func (d *docScanner) object(fn func(key string) error) error {
	if err := d.expect('{'); err != nil {
		return err
	}
	for first := true; ; first = false {
		more, err := d.next('}', first)
		if err != nil || !more {
			return err
		}
		raw, err := d.value(1 << 20)
		if err != nil {
			return err
		}
		if kindOf(string(raw)) != "string" {
			return d.errorf("invalid JSON: want a key, got %s", kindOf(string(raw)))
		}
		key := unquote(string(raw))
		if err := d.expect(':'); err != nil {
			return err
		}
		if err := fn(key); err != nil {
			return err
		}
	}
}

// array calls fn for each element of the list that starts next; fn must consume the element.
func (d *docScanner) array(fn func(i int) error) error {
	if err := d.expect('['); err != nil {
		return err
	}
	for i := 0; ; i++ {
		more, err := d.next(']', i == 0)
		if err != nil || !more {
			return err
		}
		if err := fn(i); err != nil {
			return err
		}
	}
}

// record reads the next value whole (at most MaxRecordBytes), checks it as JSON and returns it with
// the line it starts on; the bytes are valid until the next read.
func (d *docScanner) record() ([]byte, int, error) {
	if _, err := d.peek(); err != nil {
		return nil, 0, err
	}
	start := d.line
	raw, err := d.value(d.lim.MaxRecordBytes)
	if err != nil {
		return nil, start, err
	}
	w := where{file: d.file, line: start}
	if err := checkDepth(w, raw, d.lim.MaxDepth); err != nil {
		return nil, start, err
	}
	return raw, start, nil
}

// skip consumes the next value without keeping it.
func (d *docScanner) skip() error {
	_, err := d.value(-1)
	return err
}

// value reads the next value into d.buf (limit < 0: read and drop). It tracks strings and nesting
// only; checkJSON validates what is kept.
func (d *docScanner) value(limit int) ([]byte, error) {
	if _, err := d.peek(); err != nil {
		return nil, err
	}
	d.buf = d.buf[:0]
	keep := limit >= 0
	depth, n := 0, 0
	add := func(b []byte) error {
		n += len(b)
		if !keep {
			return nil
		}
		if n > limit {
			return d.errorf("a record longer than the limit of %s (set REACH_MAX_LINE_BYTES to raise it)", byteSize(int64(limit)))
		}
		d.buf = append(d.buf, b...)
		return nil
	}
	for {
		c, err := d.br.ReadByte()
		if err == io.EOF {
			if depth == 0 && n > 0 {
				return d.buf, nil
			}
			return nil, d.errorf("truncated JSON: the file ends inside a value")
		}
		if err != nil {
			return nil, readErr(d.file, err)
		}
		switch c {
		case '"':
			if err := add([]byte{c}); err != nil {
				return nil, err
			}
			bs := 0 // backslashes just before the current position
			for {
				chunk, err := d.br.ReadSlice('"')
				if err != nil && err != bufio.ErrBufferFull {
					if err == io.EOF {
						return nil, d.errorf("truncated JSON: the file ends inside a string")
					}
					return nil, readErr(d.file, err)
				}
				ended := err == nil
				body := chunk
				if ended {
					body = chunk[:len(chunk)-1]
				}
				t := 0
				for i := len(body) - 1; i >= 0 && body[i] == '\\'; i-- {
					t++
				}
				if t == len(body) {
					bs += t
				} else {
					bs = t
				}
				d.line += bytes.Count(chunk, []byte{'\n'})
				if err := add(chunk); err != nil {
					return nil, err
				}
				if !ended {
					continue
				}
				if bs%2 == 1 { // an escaped quote
					bs = 0
					continue
				}
				break
			}
			if depth == 0 {
				return d.buf, nil
			}
			continue
		case '{', '[':
			if depth++; depth > d.lim.MaxDepth {
				return nil, d.errorf("JSON nested deeper than %d levels", d.lim.MaxDepth)
			}
		case '}', ']':
			if depth == 0 { // the end of the container around a scalar
				_ = d.br.UnreadByte()
				return d.buf, nil
			}
			depth--
		case '\n':
			d.line++
		case ',', ':', ' ', '\t', '\r':
			if depth == 0 {
				_ = d.br.UnreadByte()
				return d.buf, nil
			}
		}
		if err := add([]byte{c}); err != nil {
			return nil, err
		}
		if depth == 0 && (c == '}' || c == ']') {
			return d.buf, nil
		}
	}
}

// end checks that nothing but white space follows the document.
func (d *docScanner) end() error {
	for {
		c, err := d.br.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return readErr(d.file, err)
		}
		switch c {
		case '\n':
			d.line++
		case ' ', '\t', '\r':
		default:
			return d.errorf("more than one JSON value in the file (next is %q)", c)
		}
	}
}

// readArray reads a JSON list of records, each as a JSONL line would be.
func (sr *sampleReader) readArray(r io.Reader) error {
	d := newDocScanner(r, sr.file, sr.o.Limits)
	n := 0
	err := d.array(func(i int) error {
		raw, line, err := d.record()
		if err != nil {
			return err
		}
		w := where{file: sr.file, line: line, record: "[" + strconv.Itoa(i) + "]"}
		if err := checkJSON(w, raw, sr.o.Limits); err != nil {
			return err
		}
		n++
		return sr.record(w, i, u2s(raw))
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return &Error{File: sr.file, Msg: "empty list: no records"}
	}
	return d.end()
}

package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

// container is how a file's records are stored.
type container int

const (
	kindJSONL     container = iota // one JSON object per line (or one JSON document, for document formats)
	kindJSONArray                  // a JSON list of records
	kindCSV                        // text that is not JSON
	kindParquet
	kindZip
)

var (
	magicGzip    = []byte{0x1f, 0x8b}
	magicZstd    = []byte{0x28, 0xb5, 0x2f, 0xfd}
	magicParquet = []byte("PAR1")
	magicZip     = []byte("PK\x03\x04")
)

// input is an opened samples file: a stream, plus random access for parquet and zip.
type input struct {
	kind container
	r    io.Reader   // the (decompressed) bytes, buffered
	ra   io.ReaderAt // random access, for parquet and zip
	size int64
}

// sizedReaderAt is what parquet and zip readers need; *os.File is adapted by statSize.
type sizedReaderAt interface {
	io.ReaderAt
	Size() int64
}

// openInput recognises the container and compression of r. The returned function releases what
// was opened (decompressors, a temporary file).
func openInput(r io.Reader, file string, lim Limits) (*input, func(), error) {
	closers := []func(){}
	done := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	tap := &errTap{r: r}
	br := bufio.NewReaderSize(tap, 64<<10)
	compressed := false
	for range 2 { // at most one compression layer (a .jsonl.gz), tolerating a second
		head, _ := br.Peek(4)
		switch {
		case bytes.HasPrefix(head, magicGzip):
			zr, err := gzip.NewReader(br)
			if err != nil {
				done()
				return nil, nil, &Error{File: file, Msg: "gzip: " + err.Error()}
			}
			zr.Multistream(true)
			closers = append(closers, func() { zr.Close() })
			br = bufio.NewReaderSize(&decompressErr{r: zr, tap: tap, file: file, what: "gzip", lim: lim}, 64<<10)
			compressed = true
			continue
		case bytes.HasPrefix(head, magicZstd):
			zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
			if err != nil {
				done()
				return nil, nil, &Error{File: file, Msg: "zstd: " + err.Error()}
			}
			closers = append(closers, zr.Close)
			br = bufio.NewReaderSize(&decompressErr{r: zr, tap: tap, file: file, what: "zstd", lim: lim}, 64<<10)
			compressed = true
			continue
		}
		break
	}
	in := &input{r: br}
	head, err := br.Peek(4)
	if err != nil && err != io.EOF {
		done()
		var e *Error
		if errors.As(err, &e) {
			return nil, nil, e
		}
		return nil, nil, fmt.Errorf("ingest: read %s: %w", file, err)
	}
	switch {
	case bytes.HasPrefix(head, magicParquet):
		in.kind = kindParquet
	case bytes.HasPrefix(head, magicZip):
		in.kind = kindZip
	default:
		b, _ := br.Peek(64 << 10)
		b = bytes.TrimLeft(bytes.TrimPrefix(b, utf8BOM), " \t\r\n")
		switch {
		case len(b) > 0 && b[0] == '[':
			in.kind = kindJSONArray
		case len(b) > 0 && b[0] != '{' && looksLikeCSV(b):
			in.kind = kindCSV
		}
		return in, done, nil
	}
	// Parquet and zip need random access.
	if sra, ok := r.(sizedReaderAt); ok && !compressed {
		in.ra, in.size = sra, sra.Size()
		return in, done, nil
	}
	if f, ok := r.(*os.File); ok && !compressed {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			in.ra, in.size = f, st.Size()
			return in, done, nil
		}
	}
	tmp, err := os.CreateTemp("", "reach-ingest-*")
	if err != nil {
		done()
		return nil, nil, fmt.Errorf("ingest: spool %s: %w", file, err)
	}
	closers = append(closers, func() { tmp.Close(); os.Remove(tmp.Name()) })
	n, err := io.Copy(tmp, io.LimitReader(br, lim.MaxSpoolBytes+1))
	if err != nil {
		done()
		var e *Error
		if errors.As(err, &e) {
			return nil, nil, e
		}
		return nil, nil, fmt.Errorf("ingest: spool %s: %w", file, err)
	}
	if n > lim.MaxSpoolBytes {
		done()
		return nil, nil, &Error{File: file, Msg: fmt.Sprintf("larger than %s once decompressed: the limit for parquet and zip files", byteSize(lim.MaxSpoolBytes))}
	}
	in.ra, in.size = tmp, n
	return in, done, nil
}

// looksLikeCSV: text whose first line has a comma (JSON files start with '{' or '[').
func looksLikeCSV(b []byte) bool {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return bytes.IndexByte(line, ',') >= 0
}

// errTap remembers a failed read of the input, so that it is not mistaken for bad data.
type errTap struct {
	r   io.Reader
	err error
	n   int64 // bytes read (compressed, for a compressed file)
}

func (t *errTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.n += int64(n)
	if err != nil && err != io.EOF {
		t.err = err
	}
	return n, err
}

// decompressErr turns a decompressor's complaint about the data into an *Error; a failed read of
// the input underneath stays a plain (retryable) error.
type decompressErr struct {
	r          io.Reader
	tap        *errTap
	file, what string
	lim        Limits
	n          int64 // bytes given out
}

func (d *decompressErr) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.n += int64(n)
	// A decompression bomb is refused while it inflates, not after: its
	// decompressed bytes are bounded absolutely and by a ratio to the
	// compressed bytes read so far.
	if d.n > d.lim.MaxInflatedBytes {
		return n, &Error{File: d.file, Msg: fmt.Sprintf("%s: inflates to more than %s, the limit for a compressed file (REACH_MAX_INFLATED_BYTES raises it)",
			d.what, byteSize(d.lim.MaxInflatedBytes))}
	}
	if d.n > InflateFloorBytes && d.n > d.lim.MaxInflateRatio*d.tap.n {
		return n, &Error{File: d.file, Msg: fmt.Sprintf("%s: %s of compressed data inflated to %s, more than %d times its size: refused as a decompression bomb (REACH_MAX_INFLATE_RATIO raises the ratio)",
			d.what, mib(d.tap.n), mib(d.n), d.lim.MaxInflateRatio)}
	}
	switch {
	case err == nil || err == io.EOF:
	case d.tap.err != nil:
		err = fmt.Errorf("ingest: read %s: %w", d.file, d.tap.err)
	case err == io.ErrUnexpectedEOF:
		err = &Error{File: d.file, Msg: d.what + ": the compressed data ends early (a cut-off file)"}
	default:
		err = &Error{File: d.file, Msg: d.what + ": " + err.Error()}
	}
	return n, err
}

// mib is a byte count in MiB with one decimal (KiB below 1 MiB), for messages.
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

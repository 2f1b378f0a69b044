package web

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/reach-lab/reach/internal/analysis"
)

// body is a response encoded once per report, with its gzip form: a
// download is then served without encoding or compressing it again.
type body struct {
	raw, gz []byte
}

// memoBody encodes and compresses what build returns, once per report
// entry and key.
func memoBody(e *analysis.Entry, key string, build func() ([]byte, error)) (body, error) {
	v, err := e.Memo("body|"+key, func() (any, error) {
		raw, err := build()
		if err != nil {
			return nil, err
		}
		return newBody(raw)
	})
	if err != nil {
		return body{}, err
	}
	return v.(body), nil
}

// newBody is raw with its gzip form.
func newBody(raw []byte) (body, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if _, err := zw.Write(raw); err != nil {
		return body{}, err
	}
	if err := zw.Close(); err != nil {
		return body{}, err
	}
	return body{raw: raw, gz: buf.Bytes()}, nil
}

// write sends the body, compressed when the client accepts gzip (the
// compression middleware leaves a response with Content-Encoding alone).
func (b body) write(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Accept-Encoding")
	if acceptsGzip(r) && b.gz != nil {
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(b.gz)
		return
	}
	_, _ = w.Write(b.raw)
}

// memoReportProblems: a report JSON of at most this many problems (a few
// MB) is encoded once and kept with the report; a larger one is streamed
// to each request (a million problems make about 440 MB).
const memoReportProblems = 20_000

// streamGzip sends what write writes, gzip-compressed as it goes when the
// client accepts gzip. An error after the first bytes cannot change the
// status: the client sees a cut response (and the caller logs it).
func streamGzip(w http.ResponseWriter, r *http.Request, write func(io.Writer) error) error {
	w.Header().Add("Vary", "Accept-Encoding")
	if !acceptsGzip(r) {
		return write(w)
	}
	w.Header().Set("Content-Encoding", "gzip")
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err := write(zw); err != nil {
		return err
	}
	return zw.Close()
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

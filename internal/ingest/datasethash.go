package ingest

import (
	"crypto/sha256"
	"hash"
	"slices"
	"strconv"
	"strings"
)

// DatasetHash is the content hash of a problem set, to store an identical
// dataset uploaded again once. It covers each problem's key (its Index as
// text when the file has none), statement, reference answer, subject,
// level, kind and extra fields (a code problem's tests live there), in file
// order, each normalised: CRLF becomes LF and surrounding whitespace goes.
// What the file looked like (field names, field order, JSON spacing) does
// not count. Migration 00115 computes the same hash in SQL from stored
// problems; the two must stay in step.
type DatasetHash struct {
	h hash.Hash
	n int
}

// NewDatasetHash returns an empty hash.
func NewDatasetHash() *DatasetHash { return &DatasetHash{h: sha256.New()} }

// Add adds the next problem, in file order.
func (d *DatasetHash) Add(p Problem) {
	key := p.Key
	if key == "" {
		key = strconv.Itoa(p.Index)
	}
	for _, f := range []string{key, p.Statement, p.Reference, p.Subject, p.Level, p.Kind} {
		d.field(f)
	}
	keys := make([]string, 0, len(p.Extra))
	for k := range p.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys) // byte order, as SQL's COLLATE "C"
	d.field(strconv.Itoa(len(keys)))
	for _, k := range keys {
		d.field(k)
		d.field(p.Extra[k])
	}
	d.n++
}

// field writes one normalised field, length-prefixed so that no two
// different problems write the same bytes.
func (d *DatasetHash) field(s string) {
	s = normaliseField(s)
	d.h.Write([]byte(strconv.Itoa(len(s))))
	d.h.Write([]byte{':'})
	d.h.Write([]byte(s))
}

func normaliseField(s string) string {
	return strings.Trim(strings.ReplaceAll(s, "\r\n", "\n"), " \t\n\r")
}

// Sum returns the 32-byte SHA-256 of the problems added so far; nil when
// none were.
func (d *DatasetHash) Sum() []byte {
	if d.n == 0 {
		return nil
	}
	return d.h.Sum(nil)
}

package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/testfiles"
)

// dataPath returns a path under the repository's real test data (internal/testfiles, data/).
func dataPath(t testing.TB, rel string) string {
	t.Helper()
	return testfiles.Data(t, rel)
}

func open(t testing.TB, rel string) *os.File {
	t.Helper()
	f, err := os.Open(dataPath(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// sniffFile runs Sniff on the first SniffBytes of a real file.
func sniffFile(t testing.TB, rel string) (Format, *Mapping) {
	t.Helper()
	f := open(t, rel)
	head := make([]byte, SniffBytes)
	n, _ := f.Read(head)
	format, m, err := Sniff(head[:n], filepath.Base(rel))
	if err != nil {
		t.Fatalf("Sniff(%s): %v", rel, err)
	}
	return format, m
}

// collect reads a samples string and returns the samples, or the error.
func collect(t testing.TB, in string, f Format, m *Mapping) ([]Sample, error) {
	t.Helper()
	var out []Sample
	err := ReadSamples(strings.NewReader(in), "in.jsonl", f, m, func(s Sample) error {
		out = append(out, s)
		return nil
	}, nil)
	return out, err
}

// wantError checks that err is an *Error at file:line naming field, whose message contains msg.
func wantError(t *testing.T, err error, line int, field, msg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want *Error at line %d field %q, got %v", line, field, err)
	}
	if e.Line != line || e.Field != field || !strings.Contains(e.Msg, msg) {
		t.Fatalf("want line %d field %q msg ~%q, got %q (line %d field %q)", line, field, msg, e.Error(), e.Line, e.Field)
	}
}

package ingest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// sniffHead sniffs the first SniffBytes of data, as an upload is sniffed.
func sniffHead(data []byte, file string) error {
	_, _, err := Sniff(data[:min(len(data), SniffBytes)], file)
	return err
}

// TestRefusalsSayWhatTheySawAndWant: refusals that misled a user now name
// what was seen and what is wanted.
func TestRefusalsSayWhatTheySawAndWant(t *testing.T) {
	// An 8 MiB field name: the line is one JSON object, cut by the head.
	long := []byte(`{"` + strings.Repeat("k", 8<<20) + `": 1, "completion": "x"}` + "\n")
	if err := sniffHead(long, "longkey.jsonl"); err == nil || strings.Contains(err.Error(), "want one JSON object per line") ||
		!strings.Contains(err.Error(), "first field is not complete within the first 256 KiB") {
		t.Errorf("8 MiB key: %v", err)
	}
	// 100,000 numeric fields, then the text: the head ends before it.
	var b bytes.Buffer
	b.WriteString("{")
	for i := range 100000 {
		fmt.Fprintf(&b, `"f%d": %d, `, i, i)
	}
	b.WriteString(`"text": "The answer is 2."}` + "\n")
	err := sniffHead(b.Bytes(), "wide.jsonl")
	if err == nil || !strings.Contains(err.Error(), "no text field among the first") || !strings.Contains(err.Error(), "--map completion=FIELD") {
		t.Errorf("100,000 keys then text: %v", err)
	}
	// The same with few fields is still "not a samples file", naming them.
	if err := sniffHead([]byte(`{"a": 1, "b": 2}`+"\n"), "nums.jsonl"); err == nil || !strings.Contains(err.Error(), "no field holds text (fields a, b)") {
		t.Errorf("numbers only: %v", err)
	}
	// Counts with another separator: the expected columns are listed.
	for _, sep := range []string{";", "\t", "|"} {
		head := strings.Join([]string{"pid", "n", "c"}, sep) + "\n" + strings.Join([]string{"p0", "4", "1"}, sep) + "\n"
		err := sniffHead([]byte(head), "counts.csv")
		if err == nil || !strings.Contains(err.Error(), "problem_id, n and correct") || !strings.Contains(err.Error(), fmt.Sprintf("%q", sep)) {
			t.Errorf("counts separated by %q: %v", sep, err)
		}
	}
	if err := sniffHead([]byte("hello world\n"), "x.txt"); err == nil || !strings.Contains(err.Error(), "problem_id, n and correct") {
		t.Errorf("plain text: %v", err)
	}
}

package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"
)

// A file cut off inside its first record (head -c 100 of an lm-eval
// samples file) is refused as truncated before any layout is guessed: a
// guess from the fields read so far named no completion, and the advice to
// accept it led to an error that named no file. A head cut by SniffBytes
// (a long first line of a longer file) is no truncation.
func TestFirstRecordCutOffIsTruncated(t *testing.T) {
	full := `{"doc_id": 0, "doc": {"problem": "What is $2+3$?", "answer": "5", "unique_id": "p0"}, "target": "5", "resps": [["The answer is \\boxed{5}."]], "filtered_resps": ["The answer is \\boxed{5}."], "exact_match": 1.0}` + "\n"
	cut := full[:100]
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(cut))
	zw.Close()
	for name, head := range map[string][]byte{"plain": []byte(cut), "gzip": gz.Bytes(), "after blank lines": []byte("\n\n" + cut)} {
		_, _, err := Sniff(head, "samples.jsonl")
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "samples.jsonl:") ||
			!strings.Contains(err.Error(), ": truncated JSON: the line ends inside a value") {
			t.Errorf("%s: Sniff of a file cut in its first record: %v, want samples.jsonl:N: truncated JSON", name, err)
		}
		if _, err := Examine(bytes.NewReader(head), "samples.jsonl"); err == nil || !strings.Contains(err.Error(), "truncated JSON") {
			t.Errorf("%s: Examine: %v, want truncated JSON", name, err)
		}
	}
	if _, _, err := Sniff([]byte(cut), "samples.jsonl"); err == nil || !strings.HasPrefix(err.Error(), "samples.jsonl:1: ") {
		t.Errorf("error %v does not name line 1", err)
	}
	// The whole record reads; a first line longer than the head is cut by the head, not in the file.
	if f, _, err := Sniff([]byte(full), "samples.jsonl"); err != nil || f != FormatLMEval {
		t.Errorf("the whole record: %s, %v; want lm-eval", f, err)
	}
	long := `{"doc_id": 0, "target": "5", "resps": [["` + strings.Repeat("x", SniffBytes) + `"]], "filtered_resps": ["x"]}` + "\n"
	if f, _, err := Sniff([]byte(long[:SniffBytes]), "samples.jsonl"); err != nil || f != FormatLMEval {
		t.Errorf("a head cut inside a long first line: %s, %v; want lm-eval", f, err)
	}
}

// A mapping that names no completion nor verdict is refused naming the file.
func TestMappingErrorNamesFile(t *testing.T) {
	head := []byte(`{"doc_id": 0, "target": "5"}` + "\n")
	m := &Mapping{ProblemID: "doc_id", Reference: "target"}
	if err := CheckMapping(head, "rl.jsonl", m); err == nil || !strings.HasPrefix(err.Error(), "rl.jsonl: mapping names neither") {
		t.Errorf("CheckMapping: %v, want it to name rl.jsonl", err)
	}
	err := Read(bytes.NewReader(head), "rl.jsonl", FormatMapped, m, Options{OnSample: func(Sample) error { return nil }})
	if err == nil || !strings.HasPrefix(err.Error(), "rl.jsonl: mapping names neither") {
		t.Errorf("Read: %v, want it to name rl.jsonl", err)
	}
}

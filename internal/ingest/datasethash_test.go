package ingest

import (
	"bytes"
	"strings"
	"testing"
)

func hashOf(t *testing.T, file string) []byte {
	t.Helper()
	h := NewDatasetHash()
	if err := ReadDataset(strings.NewReader(file), "d.jsonl", func(p Problem) error { h.Add(p); return nil }); err != nil {
		t.Fatalf("ReadDataset: %v", err)
	}
	return h.Sum()
}

func TestDatasetHash(t *testing.T) {
	base := `{"unique_id": "a", "problem": "What is 1+1?", "answer": "2", "subject": "Algebra", "level": "Level 1"}
{"unique_id": "b", "problem": "What is 2+2?", "answer": "4", "subject": "Algebra", "level": 2}
`
	h := hashOf(t, base)
	if len(h) != 32 {
		t.Fatalf("hash is %d bytes, want 32", len(h))
	}
	same := map[string]string{
		"field order and spacing": `{"answer":"2","level":"1","problem":"What is 1+1?","subject":"Algebra","unique_id":"a"}
{"level":"2", "answer":4,"problem":"What is 2+2?","subject":"Algebra","unique_id":"b"}`,
		"field aliases, CRLF and blank lines": "{\"id\": \"a\", \"question\": \"What is 1+1?\\r\\n\", \"gold\": \"2\", \"type\": \"Algebra\", \"level\": \"1\"}\r\n\r\n" +
			"{\"id\": \"b\", \"question\": \" What is 2+2?\", \"gold\": \"4\", \"type\": \"Algebra\", \"level\": \"2\"}\r\n",
	}
	for name, f := range same {
		if got := hashOf(t, f); !bytes.Equal(got, h) {
			t.Errorf("%s: hash %x, want %x (the same problems)", name, got, h)
		}
	}
	differ := map[string]string{
		"another statement": strings.Replace(base, "1+1", "1+2", 1),
		"another answer":    strings.Replace(base, `"answer": "2"`, `"answer": "3"`, 1),
		"another id":        strings.Replace(base, `"unique_id": "b"`, `"unique_id": "c"`, 1),
		"another subject":   strings.Replace(base, `"subject": "Algebra", "level": 2`, `"subject": "Geometry", "level": 2`, 1),
		"another level":     strings.Replace(base, `"level": 2`, `"level": 3`, 1),
		"another order": `{"unique_id": "b", "problem": "What is 2+2?", "answer": "4", "subject": "Algebra", "level": 2}
{"unique_id": "a", "problem": "What is 1+1?", "answer": "2", "subject": "Algebra", "level": "Level 1"}`,
		"one problem less": strings.SplitAfter(base, "\n")[0],
		"an extra field":   strings.Replace(base, `"level": 2}`, `"level": 2, "solution": "2+2=4"}`, 1),
		"fields run together": `{"unique_id": "a", "problem": "What is 1+1?2", "answer": "", "subject": "Algebra", "level": "Level 1"}
{"unique_id": "b", "problem": "What is 2+2?", "answer": "4", "subject": "Algebra", "level": 2}`,
	}
	for name, f := range differ {
		if got := hashOf(t, f); bytes.Equal(got, h) {
			t.Errorf("%s: same hash as the original", name)
		}
	}
	// Code problems differ by their tests, kept in Extra.
	he := `{"task_id": "HumanEval/0", "prompt": "def f(x):\n", "entry_point": "f", "test": "def check(c):\n    assert c(1) == 1\n"}`
	he2 := strings.Replace(he, "c(1) == 1", "c(1) == 2", 1)
	if bytes.Equal(hashOf(t, he), hashOf(t, he2)) {
		t.Error("two code problems with different tests have the same hash")
	}
	if NewDatasetHash().Sum() != nil {
		t.Error("the hash of no problems is not nil")
	}
}

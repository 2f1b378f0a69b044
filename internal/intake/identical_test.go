package intake

import (
	"io"
	"strings"
	"testing"
)

func upload(name, body string) Upload {
	return Upload{Name: name, Size: int64(len(body)), Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }}
}

// Two of a model's files with the same bytes are refused, naming both and
// their places; equal sizes with other bytes, and files of other sizes,
// are not (those of other sizes are not even read).
func TestIdenticalFiles(t *testing.T) {
	err := IdenticalFiles("rl", []Upload{upload("s0.jsonl", "abc\n"), upload("s1.jsonl", "abd\n"), upload("s0 copy.jsonl", "abc\n")})
	if err == nil || !strings.Contains(err.Error(), `model "rl": s0.jsonl and s0 copy.jsonl are the same file (identical bytes; files 1 and 3 of the model)`) {
		t.Errorf("identical files: %v", err)
	}
	if err := IdenticalFiles("rl", []Upload{upload("s0.jsonl", "abc\n"), upload("s1.jsonl", "abd\n")}); err != nil {
		t.Errorf("equal sizes, other bytes: %v", err)
	}
	unread := Upload{Name: "big.jsonl", Size: 99, Open: func() (io.ReadCloser, error) { t.Error("a file of its own size was read"); return nil, io.EOF }}
	if err := IdenticalFiles("rl", []Upload{upload("s0.jsonl", "abc\n"), unread}); err != nil {
		t.Errorf("other sizes: %v", err)
	}
}

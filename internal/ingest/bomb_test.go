package ingest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kgzip "github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// bomb writes one good line and then size bytes of blank lines through a
// compressor, as a decompression bomb is made.
func bomb(t *testing.T, good []byte, size int64, compress func(io.Writer) io.WriteCloser) []byte {
	t.Helper()
	var out bytes.Buffer
	w := compress(&out)
	if _, err := w.Write(good); err != nil {
		t.Fatal(err)
	}
	blank := bytes.Repeat([]byte("\n"), 1<<20)
	for n := int64(0); n < size; n += int64(len(blank)) {
		if _, err := w.Write(blank); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestDecompressionBombsRefused: a gzip and a zstd file that inflate to a
// good line and half a gigabyte of blank lines are refused while inflating,
// naming the limit and how to raise it; a real compressed samples file still
// reads.
func TestDecompressionBombsRefused(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	lm := toolFile(t, "lmeval_samples_own_words_2026-01-02T03-04-05.678901.jsonl")
	const size = 512 << 20
	bombs := map[string][]byte{
		"bomb.jsonl.gz": bomb(t, lm, size, func(w io.Writer) io.WriteCloser {
			z, _ := kgzip.NewWriterLevel(w, kgzip.BestCompression)
			return z
		}),
		"bomb.jsonl.zst": bomb(t, lm, size, func(w io.Writer) io.WriteCloser {
			z, _ := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
			return z
		}),
	}
	for name, data := range bombs {
		start := time.Now()
		_, err := readBytes(t, name, data, words)
		took := time.Since(start)
		var e *Error
		if err == nil || !errors.As(err, &e) || !strings.Contains(err.Error(), "decompression bomb") || !strings.Contains(err.Error(), "REACH_MAX_INFLATE_RATIO") {
			t.Errorf("%s (%d bytes compressed): %v, want a refusal as a decompression bomb naming REACH_MAX_INFLATE_RATIO", name, len(data), err)
		}
		t.Logf("%s: %d bytes, refused after %v: %v", name, len(data), took.Round(time.Millisecond), err)
	}
	// The absolute cap, whatever the ratio.
	lim := DefaultLimits
	lim.MaxInflatedBytes = 1 << 20
	err := Read(bytes.NewReader(bombs["bomb.jsonl.gz"]), "big.jsonl.gz", FormatLMEval, nil, Options{Limits: lim, OnSample: func(Sample) error { return nil }})
	if err == nil || !strings.Contains(err.Error(), "REACH_MAX_INFLATED_BYTES") {
		t.Errorf("past MaxInflatedBytes: %v", err)
	}
	// A real file compressed (about 5× for gzip) still reads.
	real, err := os.ReadFile(filepath.Join(toolsDir, "lmeval_samples_own_words_2026-01-02T03-04-05.678901.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	z, _ := kgzip.NewWriterLevel(&gz, kgzip.BestCompression)
	z.Write(bytes.Repeat(real, 1))
	z.Close()
	if _, err := readBytes(t, "real.jsonl.gz", gz.Bytes(), words); err != nil {
		t.Errorf("a real compressed file: %v", err)
	}
}

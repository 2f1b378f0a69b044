package ingest

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// TestParquetCellRefusedBeforeDecoding: a parquet file with one completion
// cell over the row limit is refused from its footer's size or its page
// header, naming the row group, the column and the limit, without decoding
// the page (the old reader decoded a 100 MB cell first: 1.06 GB in serve);
// the same file with a limit above the cell reads.
func TestParquetCellRefusedBeforeDecoding(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		cell       int
		limit      int
		opts       []parquet.WriterOption
	}{
		// parquet-go keeps each chunk's min and max whole: a footer of 80 MiB.
		{"footer", "a parquet footer (metadata) of 80.0 MiB", 40 << 20, 0, nil},
		// Without chunk statistics, the page header tells (its own statistics
		// hold the value too, and are not decoded).
		{"page", "a parquet page of 8.0 MiB", 8 << 20, 4 << 20, []parquet.WriterOption{parquet.SkipPageBounds("generations", "list", "element")}},
	} {
		rows := []hfRow{{Problem: "What is 1+1?", Answer: "2", UUID: "u-0",
			Generations: []string{"The answer is \\boxed{2}. " + strings.Repeat("x", tc.cell)}, Correctness: []bool{true}, FinishReasons: []string{"length"}}}
		lim := DefaultLimits
		if tc.limit > 0 {
			lim.MaxRecordBytes = tc.limit
		}
		var b bytes.Buffer
		w := parquet.NewGenericWriter[hfRow](&b, append(tc.opts, parquet.Compression(&parquet.Zstd))...)
		if _, err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		data := b.Bytes()
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		err := Read(bytes.NewReader(data), "big.parquet", FormatParquet, nil, Options{Limits: lim, OnSample: func(Sample) error { return nil }})
		took := time.Since(start)
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "over the limit") {
			t.Fatalf("%s: a 100 MiB cell: %v", tc.name, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 2<<20 {
			t.Errorf("%s: refusing the cell allocated %d MiB: it was decoded", tc.name, grew>>20)
		}
		t.Logf("%s: refused in %v: %v", tc.name, took.Round(time.Millisecond), err)
		if tc.name == "page" {
			lim.MaxRecordBytes = 64 << 20
			n := 0
			if err := Read(bytes.NewReader(data), "big.parquet", FormatParquet, nil, Options{Limits: lim, OnSample: func(Sample) error { n++; return nil }}); err != nil || n != 1 {
				t.Errorf("with a 64 MiB limit: %d samples, %v", n, err)
			}
		}
	}
}

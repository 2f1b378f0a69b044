package ingest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
)

// synthReader generates a Reach per-sample JSONL file on demand, so the file itself is never in
// memory: lines samples spread round-robin over problems, each with a ~600-byte completion.
type synthReader struct {
	lines, problems, done int
	size                  int64
	line                  []byte
	rest                  []byte
}

var synthText = strings.Repeat("Let x be the number of apples. Then 3x + 4 = 19,\nso x = 5. ", 10)

func (r *synthReader) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		if r.done == r.lines {
			return 0, io.EOF
		}
		i := r.done
		r.done++
		r.line = fmt.Appendf(r.line[:0], `{"problem_id": "p%d", "sample_index": %d, "completion": %q, "finish_reason": "stop", "completion_tokens": %d, "correct": %t}`+"\n",
			i%r.problems, i/r.problems, synthText, 300+i%50, i%3 == 0)
		r.rest = r.line
		r.size += int64(len(r.line))
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// memRun reads a samples stream and reports the peak heap above the starting live heap (sampled
// every 4,096 samples) and the live heap half way through (after a forced GC).
type memRun struct {
	samples, correct int
	peak, live       int64
}

func measure(tb testing.TB, r io.Reader, f Format, every, total int) memRun {
	tb.Helper()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := int64(ms.HeapAlloc)
	var m memRun
	err := ReadSamples(r, "synthetic.jsonl", f, nil, func(s Sample) error {
		m.samples++
		if *s.Correct {
			m.correct++
		}
		if m.samples%every == 0 {
			runtime.ReadMemStats(&ms)
			m.peak = max(m.peak, int64(ms.HeapAlloc)-base)
		}
		if m.samples == total/2 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			m.live = int64(ms.HeapAlloc) - base
		}
		return nil
	}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestMemoryFlatInFileSize reads 20k and 200k sample lines (about 13 MB and 130 MB) and checks
// that the heap does not grow with the file: the 200k run may use at most 1 MiB more live heap
// than the 20k run (per-problem index bitsets), and its peak stays far below the file size.
func TestMemoryFlatInFileSize(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 130 MB of synthetic JSONL")
	}
	run := func(lines int) (memRun, int64) {
		r := &synthReader{lines: lines, problems: 500}
		m := measure(t, r, FormatReachSample, 4096, lines)
		if m.samples != lines || m.correct != (lines+2)/3 {
			t.Fatalf("%d samples, %d correct", m.samples, m.correct)
		}
		return m, r.size
	}
	small, smallSize := run(20_000)
	large, largeSize := run(200_000)
	t.Logf("20k lines (%d B): live %d B, peak %d B; 200k lines (%d B): live %d B, peak %d B",
		smallSize, small.live, small.peak, largeSize, large.live, large.peak)
	if large.live-small.live > 1<<20 {
		t.Errorf("live heap grew by %d B from 20k to 200k lines", large.live-small.live)
	}
	if large.peak > 32<<20 {
		t.Errorf("peak heap %d B for a %d B file", large.peak, largeSize)
	}
}

// qwenLine builds one evaluator line with n completions of size bytes each.
func qwenLine(n, size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"idx": 0, "question": "q", "gt": "5", "code": [`)
	text := strings.Repeat("y", size)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + text + `"`)
	}
	b.WriteString(`], "pred": [`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"5"`)
	}
	b.WriteString(`], "score": [`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, i%2 == 0)
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

// TestMemoryPerProblemLine reads one 16 MiB evaluator line (1,024 completions of 16 KiB). The line
// is read in blocks and assembled once (2x while the blocks are copied); its samples are delivered
// one at a time as they are decoded, so the peak heap, garbage not yet collected included, stays
// under 3.5x the line: the bound README states ("about 3x the longest line").
func TestMemoryPerProblemLine(t *testing.T) {
	line := qwenLine(1024, 16<<10)
	m := measure(t, bytes.NewReader(line), FormatQwenEval, 256, 0)
	t.Logf("line %d B: peak heap %d B (%.2fx)", len(line), m.peak, float64(m.peak)/float64(len(line)))
	if m.samples != 1024 || m.correct != 512 {
		t.Fatalf("%d samples, %d correct", m.samples, m.correct)
	}
	if m.peak > int64(len(line))*7/2 {
		t.Errorf("peak heap %d B for a %d B line", m.peak, len(line))
	}
}

// BenchmarkReadSamplesSynthetic reads 20k generated sample lines from memory (parser throughput);
// peak-heap-B is the heap above the start, sampled every 4,096 samples.
func BenchmarkReadSamplesSynthetic(b *testing.B) {
	data, err := io.ReadAll(&synthReader{lines: 20_000, problems: 500})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var peak int64
	for b.Loop() {
		peak = max(peak, measure(b, bytes.NewReader(data), FormatReachSample, 4096, 0).peak)
	}
	b.ReportMetric(float64(peak), "peak-heap-B")
}

func BenchmarkReadSamplesQwenLine(b *testing.B) {
	line := qwenLine(1024, 16<<10)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if err := ReadSamples(bytes.NewReader(line), "q.jsonl", FormatQwenEval, nil, func(Sample) error { return nil }, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadSamplesReal reads the largest real files from memory (throughput of the parser
// alone); peak-heap-B is the most the heap grew during one read (garbage included).
func BenchmarkReadSamplesReal(b *testing.B) {
	for _, tc := range []struct {
		name, rel string
		f         Format
		m         *Mapping
	}{
		{"gpt3-solutions-mapped", "generations/gsm8k-openai-gpt3-example-solutions/example_model_solutions.jsonl", FormatMapped,
			&Mapping{Completion: "175b_verification.solution", Correct: "175b_verification.is_correct"}},
		{"qwen-eval-math500", "generations/math500-qwen3-4b-base-greedy/long-cot-boxed__test_long-cot-boxed_-1_seed0_t0.0_s0_e-1.jsonl", FormatQwenEval, nil},
		{"qwen-eval-math100x8", "generations/math100-qwen25-math-instruct-maj8-example/math_cot_100.jsonl", FormatQwenEval, nil},
		{"humaneval-results", "humaneval/samples-mistral-vs-zephyr/mistral_samples.jsonl_results.jsonl", FormatHumanEvalResults, nil},
		{"gsm8k-rollouts", "generations/gsm8k30-qwen25-1.5b-sft-vs-rlvr-ppo/results_2048_batched/sft_raw.jsonl", FormatMapped, &gsm8kRollouts},
	} {
		b.Run(tc.name, func(b *testing.B) {
			data, err := os.ReadFile(dataPath(b, tc.rel))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var ms runtime.MemStats
			var peak int64
			for b.Loop() {
				runtime.ReadMemStats(&ms)
				base, n := int64(ms.HeapAlloc), 0
				err := ReadSamples(bytes.NewReader(data), tc.name, tc.f, tc.m, func(Sample) error {
					if n++; n%64 == 0 {
						runtime.ReadMemStats(&ms)
						peak = max(peak, int64(ms.HeapAlloc)-base)
					}
					return nil
				}, nil)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peak), "peak-heap-B")
		})
	}
}

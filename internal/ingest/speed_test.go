package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// The reader speed benchmark: the same samples (500 problems x 16 samples of ~600 bytes) as Reach
// JSONL (one line per sample), as lm-evaluation-harness --log_samples (one line per document, with
// the doc, the prompt and the target checked against the dataset) and as a parquet file of released
// generations (one row per problem), each read and matched to the dataset as an import does.
//
//	go test ./internal/ingest -run '^$' -bench ReaderSpeed -benchtime 10x
//
// prints samples/s for each, and (ReaderSpeedRatio) each reader's time over Reach JSONL's; the
// issue's target is lm-eval and parquet within 2x of Reach JSONL.

const speedProblems, speedN = 500, 16

func speedDataset() []MatchProblem {
	ps := make([]MatchProblem, speedProblems)
	for i := range ps {
		ps[i] = MatchProblem{Key: fmt.Sprintf("test/algebra/%d.json", i),
			Statement: fmt.Sprintf("Problem %d: let x be a number with 3x + %d = %d. What is x?", i, i, 3*i+i), Reference: fmt.Sprint(i)}
	}
	return ps
}

func speedCompletion(p, k int) string {
	return fmt.Sprintf("Sample %d of problem %d. ", k, p) + synthText + fmt.Sprintf("So x = \\boxed{%d}.", p+k%2)
}

func speedReach(ds []MatchProblem) []byte {
	var b bytes.Buffer
	for k := range speedN {
		for p := range ds {
			line, _ := json.Marshal(map[string]any{"problem_id": ds[p].Key, "sample_index": k, "completion": speedCompletion(p, k),
				"finish_reason": "stop"})
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func speedLMEval(ds []MatchProblem) []byte {
	var b bytes.Buffer
	for p := range ds {
		resps := make([]string, speedN)
		for k := range resps {
			resps[k] = speedCompletion(p, k)
		}
		line, _ := json.Marshal(map[string]any{"doc_id": p, "doc": map[string]any{"problem": ds[p].Statement, "answer": ds[p].Reference},
			"target": ds[p].Reference, "arguments": map[string]any{"gen_args_0": map[string]any{"arg_0": "Problem:\n" + ds[p].Statement + "\nAnswer:",
				"arg_1": map[string]any{"temperature": 0.6, "do_sample": true}}},
			"resps": [][]string{resps}, "filtered_resps": []string{resps[0]}, "filter": "none", "metrics": []string{"exact_match"},
			"exact_match": 1.0})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

type hfRow struct {
	Problem       string   `parquet:"problem"`
	Answer        string   `parquet:"answer"`
	UUID          string   `parquet:"uuid"`
	Generations   []string `parquet:"generations,list"`
	Correctness   []bool   `parquet:"correctness_math_verify,list"`
	FinishReasons []string `parquet:"finish_reasons,list"`
}

func speedParquet(ds []MatchProblem) []byte {
	var b bytes.Buffer
	w := parquet.NewGenericWriter[hfRow](&b, parquet.MaxRowsPerRowGroup(64))
	for p := range ds {
		r := hfRow{Problem: ds[p].Statement, Answer: ds[p].Reference, UUID: fmt.Sprintf("u-%d", p)}
		for k := range speedN {
			r.Generations = append(r.Generations, speedCompletion(p, k))
			r.Correctness = append(r.Correctness, k%2 == 0)
			r.FinishReasons = append(r.FinishReasons, "stop")
		}
		if _, err := w.Write([]hfRow{r}); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// readMatched reads data as an import does (sniffed format, every sample matched); it returns the samples.
func readMatched(tb testing.TB, data []byte, name string, ds []MatchProblem) int {
	tb.Helper()
	f, m, err := Sniff(data[:min(len(data), SniffBytes)], name)
	if err != nil {
		tb.Fatal(err)
	}
	mt := NewMatcher(name, ds, nil)
	n := 0
	err = Read(bytes.NewReader(data), name, f, m, Options{OnSample: func(s Sample) error {
		if _, err := mt.Resolve(&s); err != nil {
			return err
		}
		n++
		return nil
	}})
	if err == nil {
		err = mt.Finish()
	}
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func BenchmarkReaderSpeed(b *testing.B) {
	ds := speedDataset()
	for _, tc := range []struct {
		name string
		data []byte
	}{{"reach-jsonl", speedReach(ds)}, {"lm-eval", speedLMEval(ds)}, {"parquet", speedParquet(ds)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.data)))
			n := 0
			for b.Loop() {
				n = readMatched(b, tc.data, tc.name, ds)
			}
			if n != speedProblems*speedN {
				b.Fatalf("%d samples", n)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

// BenchmarkReaderSpeedRatio reads the three files in turn in every iteration (so a busy machine
// slows all three alike) and reports each reader's time over Reach JSONL's: the target is
// lm-eval-x and parquet-x below 2.
func BenchmarkReaderSpeedRatio(b *testing.B) {
	ds := speedDataset()
	data := [][]byte{speedReach(ds), speedLMEval(ds), speedParquet(ds)}
	names := []string{"reach-jsonl", "lm-eval", "parquet"}
	var took [3]time.Duration
	for b.Loop() {
		for i, d := range data {
			start := time.Now()
			readMatched(b, d, names[i], ds)
			took[i] += time.Since(start)
		}
	}
	b.ReportMetric(took[1].Seconds()/took[0].Seconds(), "lm-eval-x")
	b.ReportMetric(took[2].Seconds()/took[0].Seconds(), "parquet-x")
	b.ReportMetric(float64(speedProblems*speedN*b.N)/took[0].Seconds(), "reach-samples/s")
}

// The three files hold the same samples: the benchmark compares like with like.
func TestReaderSpeedInputs(t *testing.T) {
	ds := speedDataset()
	for name, data := range map[string][]byte{"reach-jsonl": speedReach(ds), "lm-eval": speedLMEval(ds), "parquet": speedParquet(ds)} {
		if n := readMatched(t, data, name, ds); n != speedProblems*speedN {
			t.Errorf("%s: %d samples", name, n)
		}
	}
	if !strings.Contains(speedCompletion(1, 1), "boxed") {
		t.Fatal("completions")
	}
}

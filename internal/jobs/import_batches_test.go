package jobs_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/testfiles"
)

// An import of more samples than one COPY batch (2,000) from a file stored
// in several 1 MiB chunks: the parser reads the next chunk while the
// previous batch is copied. Both used the import's transaction before, and
// a connection serves one query at a time: the import failed with "conn
// busy", was retried with growing backoff and never finished.
func TestImportManyBatches(t *testing.T) { testImportManyBatches(t) }

// TestImportManyBatchesUnlicensed is TestImportManyBatches on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestImportManyBatches runs on the stand-in.
func TestImportManyBatchesUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testImportManyBatches(t)
}

func testImportManyBatches(t *testing.T) {
	e := start(t)
	dir := testfiles.GSM8KProbe(t)
	// The SFT model's real rollouts (30 problems × 8, with their labels),
	// each problem's 8 repeated 10 times: 2,400 samples, about 5 MB.
	in, err := os.Open(filepath.Join(dir, "results_1024_cuda/sft_raw.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	const repeat = 10
	path := filepath.Join(t.TempDir(), "sft_x10.jsonl")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(out)
	want := map[string]int{} // problem key -> c
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	size := 0
	for sc.Scan() {
		var row struct {
			QID      int `json:"qid"`
			Rollouts []struct {
				Text    string `json:"text"`
				Correct bool   `json:"correct"`
			} `json:"rollouts"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		for r := range repeat {
			for i, ro := range row.Rollouts {
				line, _ := json.Marshal(map[string]any{"problem_id": row.QID, "sample_index": r*len(row.Rollouts) + i,
					"completion": ro.Text, "correct": ro.Correct})
				size += len(line) + 1
				w.Write(append(line, '\n'))
				if ro.Correct {
					want[strconv.Itoa(row.QID)]++
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	out.Close()
	if size < 3<<20 {
		t.Fatalf("the file is %d bytes; want several 1 MiB chunks", size)
	}
	rep := e.importReady(t, intake.Spec{
		Name:    "many batches",
		Dataset: intake.LocalFile(filepath.Join(dir, "data/gsm8k_subset.jsonl")),
		Models: []intake.Model{
			{Name: "SFT ×10", File: intake.LocalFile(path)},
			{Name: "SFT ×10 again", File: intake.LocalFile(path)},
		},
	})
	if rep.Problems != 30 || rep.KMax != 8*repeat {
		t.Fatalf("problems %d, k max %d; want 30, %d", rep.Problems, rep.KMax, 8*repeat)
	}
	for _, m := range rep.Models {
		for _, c := range m.Counts.All() {
			if c.N != 8*repeat || c.C != want[c.ProblemID] {
				t.Errorf("%s, problem %s: n = %d, c = %d; want %d, %d", m.Name, c.ProblemID, c.N, c.C, 8*repeat, want[c.ProblemID])
			}
		}
	}
}

package jobs_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testfiles"
)

// splitFile writes real GSM8K rollouts (30 problems × 8, each repeated 4
// times) as JSONL without sample indices and without labels, problems
// interleaved, so that every problem's samples run through every chunk
// and the verifier grades them all; bad, when set, is written as line
// `at` instead of a sample. It returns the path and the file's size.
func splitFile(t *testing.T, dir string, bad string, at int) (string, int) {
	t.Helper()
	in, err := os.Open(filepath.Join(dir, "results_1024_cuda/sft_raw.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	type row struct {
		QID      int `json:"qid"`
		Rollouts []struct {
			Text string `json:"text"`
		} `json:"rollouts"`
	}
	var rows []row
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	path := filepath.Join(t.TempDir(), "sft_split.jsonl")
	var b strings.Builder
	line := 0
	for rep := range 4 {
		for i := range 8 {
			for _, r := range rows {
				line++
				if line == at {
					b.WriteString(bad + "\n")
					continue
				}
				l, _ := json.Marshal(map[string]any{"problem_id": r.QID, "completion": fmt.Sprintf("(try %d) %s", rep, r.Rollouts[i].Text)})
				b.Write(l)
				b.WriteByte('\n')
			}
			if i == 3 {
				b.WriteString("\n") // a blank line: line numbers go on, records do not
			}
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, b.Len()
}

// storedSamples lists a run's samples as "problem/index: verdict answer hash".
func storedSamples(t *testing.T, st *store.Store, runID int64) []string {
	t.Helper()
	rows, err := st.Pool().Query(context.Background(), `SELECT p.key || '/' || s.sample_index || ': ' || s.status || ' ' || s.extracted || ' ' || md5(s.completion)
		FROM samples s JOIN problems p ON p.id = s.problem_id WHERE s.run_id = $1 ORDER BY p.key, s.sample_index`, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestSplitImport: an upload imported in chunks by several jobs stores
// exactly what one whole import stores (same problems, the same indices
// given by order of appearance across chunks, the same verdicts and
// figures), and a bad line near the end fails it before anything is stored.
func TestSplitImport(t *testing.T) { testSplitImport(t) }

// TestSplitImportUnlicensed is TestSplitImport on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestSplitImport runs on the stand-in.
func TestSplitImportUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testSplitImport(t)
}

func testSplitImport(t *testing.T) {
	dir := testfiles.GSM8KProbe(t)
	path, size := splitFile(t, dir, "", 0)
	const chunk = 96 << 10
	if size < 8*chunk {
		t.Fatalf("the file is %d bytes; want at least 8 chunks of %d", size, chunk)
	}
	spec := func(name string) intake.Spec {
		return intake.Spec{Name: name, Dataset: intake.LocalFile(filepath.Join(dir, "data/gsm8k_subset.jsonl")),
			Models: []intake.Model{{Name: "base", File: intake.LocalFile(path)}, {Name: "rl", File: intake.LocalFile(path)}}}
	}
	split := startWith(t, func(c *jobs.Config) { c.ImportChunkBytes = chunk; c.Workers = 2 })
	whole := startWith(t, func(c *jobs.Config) { c.ImportChunkBytes = -1 })
	// A second worker process on the same database (`reach worker` on
	// another machine): the chunks are shared between the two.
	startOn(t, split.st, func(c *jobs.Config) { c.ImportChunkBytes = chunk; c.Workers = 2 })
	counted := metricsSnapshot(t)
	got := split.importReady(t, spec("split"))
	want := whole.importReady(t, spec("whole"))
	// Each part counts what it stored once it commits: the split file
	// counts as many samples as the whole one, not its run's total again
	// with its last part.
	waitMetric(t, counted, "reach_samples_imported_total", 2*2*30*32)

	var chunks int
	if err := split.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM import_chunks WHERE run_id = $1 AND done`,
		got.Models[0].RunID).Scan(&chunks); err != nil {
		t.Fatal(err)
	}
	if chunks < 8 {
		t.Fatalf("%d chunks imported; want at least 8", chunks)
	}
	var workers int
	if err := split.st.Pool().QueryRow(context.Background(), `SELECT count(DISTINCT attempted_by[array_upper(attempted_by, 1)])
		FROM river_job WHERE kind = 'import-chunk' AND state = 'completed'`).Scan(&workers); err != nil {
		t.Fatal(err)
	}
	if workers < 2 {
		t.Errorf("the chunks were imported by %d worker process(es); want both", workers)
	}
	for i := range got.Models {
		g, w := storedSamples(t, split.st, got.Models[i].RunID), storedSamples(t, whole.st, want.Models[i].RunID)
		if len(g) != 30*32 || len(g) != len(w) {
			t.Fatalf("model %d: %d samples split, %d whole; want %d", i, len(g), len(w), 30*32)
		}
		for j := range g {
			if g[j] != w[j] {
				t.Fatalf("model %d sample %d: split %q, whole %q", i, j, g[j], w[j])
			}
		}
		if pg, pw := got.Models[i].Pass1, want.Models[i].Pass1; pg != pw || got.Models[i].Solved != want.Models[i].Solved {
			t.Errorf("model %d pass@1 %v split, %v whole (solved %d, %d)", i, pg, pw, got.Models[i].Solved, want.Models[i].Solved)
		}
	}
	// The local path of `reach import`: not split into parts (only its
	// process can read the file, so parts would read it twice), read once
	// and COPYed by three transactions at once, with the same result.
	jobs.SetMultiWriterBytes(t, 1)
	q := jobs.NewLocalQueue()
	local := startWith(t, func(c *jobs.Config) { c.ImportChunkBytes = chunk; c.LocalQueue = q; c.ImportWriters = 3 })
	lc, err := local.importLocal(t, q, spec("local"))
	if err != nil || lc.Status != store.StatusReady {
		t.Fatalf("local import: %v, status %s %s", err, lc.Status, lc.Error)
	}
	var localParts int
	if err := local.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'import-chunk'`).Scan(&localParts); err != nil {
		t.Fatal(err)
	}
	if localParts != 0 {
		t.Fatalf("%d parts of the local files; want none", localParts)
	}
	for i, r := range lc.Runs {
		if g, w := storedSamples(t, local.st, r.ID), storedSamples(t, whole.st, want.Models[i].RunID); strings.Join(g, "\n") != strings.Join(w, "\n") {
			t.Fatalf("model %d: the local import stored other samples than the whole import (%d, %d)", i, len(g), len(w))
		}
	}

	// A chunk job run again (a worker that died after its commit) finds its
	// chunk done and changes nothing.
	before := storedSamples(t, split.st, got.Models[0].RunID)
	for range 2 {
		if _, err := split.client.Insert(context.Background(), jobs.ImportChunkArgs{ComparisonID: got.ComparisonID, RunID: got.Models[0].RunID, Chunk: 3}, nil); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second)
	if after := storedSamples(t, split.st, got.Models[0].RunID); len(after) != len(before) {
		t.Fatalf("%d samples after a chunk job ran again, %d before", len(after), len(before))
	}
	if c := split.wait(t, got.ComparisonID); c.Status != store.StatusReady {
		t.Fatalf("status %s after a chunk job ran again", c.Status)
	}

	// The same file with a bad line near its end: the first pass refuses it
	// (naming the line), and nothing was stored.
	badPath, _ := splitFile(t, dir, `{"problem_id": 7, "completion": 42}`, 900)
	id, _, err := intake.Create(context.Background(), split.st, split.client, intake.Spec{Name: "bad",
		Dataset: intake.LocalFile(filepath.Join(dir, "data/gsm8k_subset.jsonl")),
		Models:  []intake.Model{{Name: "base", File: intake.LocalFile(path)}, {Name: "rl", File: intake.LocalFile(badPath)}}})
	if err != nil {
		t.Fatal(err)
	}
	c := split.wait(t, id)
	if c.Status != store.StatusFailed || !strings.Contains(c.Error, "sft_split.jsonl:904: completion") {
		t.Fatalf("status %s, error %q; want failed at line 904 (sample line 900 after 4 blank lines), field completion", c.Status, c.Error)
	}
	var left int
	if err := split.st.Pool().QueryRow(context.Background(), `SELECT (SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.comparison_id = $1)
		+ (SELECT count(*) FROM import_chunks k JOIN runs r ON r.id = k.run_id WHERE r.comparison_id = $1)`, id).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d samples and chunks of the failed import kept", left)
	}
}

package jobs_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// An identical dataset uploaded again (real Postgres and River, through the
// upload's import job) is stored once per project: the second comparison
// points at the first one's dataset. Another project gets its own copy;
// two uploads of it at once still make one. Deleting the comparisons
// deletes the dataset only with the last one using it.
func TestIdenticalDatasetStoredOnce(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ds := write("ds.jsonl", `{"id":"a","problem":"1+1?","answer":"2","subject":"Arithmetic","level":1}
{"id":"b","problem":"2+2?","answer":"4","subject":"Arithmetic","level":2}
`)
	// The same problems written otherwise: other field names and order.
	again := write("ds-again.jsonl", `{"question":"1+1?","gold":2,"level":"Level 1","type":"Arithmetic","id":"a"}
{"question":"2+2?","gold":4,"level":"Level 2","type":"Arithmetic","id":"b"}
`)
	other := write("other.jsonl", `{"id":"a","problem":"1+1?","answer":"2","subject":"Arithmetic","level":1}
{"id":"b","problem":"2+3?","answer":"5","subject":"Arithmetic","level":2}
`)
	base := write("base.jsonl", `{"problem_id":"a","sample_index":0,"completion":"\\boxed{2}","correct":true}
{"problem_id":"b","sample_index":0,"completion":"\\boxed{5}","correct":false}
`)
	rl := write("rl.jsonl", `{"problem_id":"a","sample_index":0,"completion":"\\boxed{2}","correct":true}
{"problem_id":"b","sample_index":0,"completion":"\\boxed{4}","correct":true}
`)
	create := func(name, dataset string, project int64) int64 {
		t.Helper()
		id, _, err := intake.Create(ctx, e.st, e.client, intake.Spec{Name: name, Dataset: intake.LocalFile(dataset), ProjectID: project,
			Models: []intake.Model{{Name: "base", File: intake.LocalFile(base)}, {Name: "rl", File: intake.LocalFile(rl)}}})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	ready := func(id int64) store.Comparison {
		t.Helper()
		c := e.wait(t, id)
		if c.Status != store.StatusReady || c.DatasetID == nil {
			t.Fatalf("comparison %d: status %s, error %q", id, c.Status, c.Error)
		}
		return c
	}
	datasets := func() int {
		t.Helper()
		var n int
		if err := e.st.Pool().QueryRow(ctx, `SELECT count(*) FROM datasets`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	first := ready(create("first", ds, 0))
	second := ready(create("second", again, 0))
	if *second.DatasetID != *first.DatasetID {
		t.Errorf("the second upload made dataset %d; want the first's, %d", *second.DatasetID, *first.DatasetID)
	}
	if n := datasets(); n != 1 {
		t.Fatalf("%d dataset rows after uploading one dataset twice; want 1", n)
	}
	// Found by its hash before anything was written: no copy was made and
	// deleted again (deleting problems checks every samples table).
	var lastID int64
	if err := e.st.Pool().QueryRow(ctx, `SELECT last_value FROM datasets_id_seq`).Scan(&lastID); err != nil {
		t.Fatal(err)
	}
	if lastID != *first.DatasetID {
		t.Errorf("dataset ids up to %d were taken; the reused upload wrote a copy", lastID)
	}
	d, err := e.st.GetDataset(ctx, *first.DatasetID)
	if err != nil {
		t.Fatal(err)
	}
	// The hash kept at import is the one the migration computes from the
	// stored problems (it backfills datasets loaded before).
	var inSQL []byte
	if err := e.st.Pool().QueryRow(ctx, `SELECT dataset_content_hash($1)`, d.ID).Scan(&inSQL); err != nil {
		t.Fatal(err)
	}
	if len(d.ContentHash) != 32 || !bytes.Equal(d.ContentHash, inSQL) {
		t.Errorf("content hash %x at import, %x in SQL; want the same 32 bytes", d.ContentHash, inSQL)
	}

	// Other problems are another dataset.
	diff := ready(create("different", other, 0))
	if *diff.DatasetID == *first.DatasetID {
		t.Error("a dataset with another problem reused the first one")
	}

	// Another project does not reuse the first project's dataset; two
	// uploads there at once make one dataset.
	p2, err := e.st.CreateProject(ctx, "second project", 0)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	ids := make([]int64, 2)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, _, err := intake.Create(ctx, e.st, e.client, intake.Spec{Name: "p2", Dataset: intake.LocalFile(ds), ProjectID: p2,
				Models: []intake.Model{{Name: "base", File: intake.LocalFile(base)}, {Name: "rl", File: intake.LocalFile(rl)}}})
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	a, b := ready(ids[0]), ready(ids[1])
	if *a.DatasetID == *first.DatasetID {
		t.Error("a comparison of another project uses the first project's dataset")
	}
	if *a.DatasetID != *b.DatasetID {
		t.Errorf("two uploads at once in one project made datasets %d and %d; want one", *a.DatasetID, *b.DatasetID)
	}
	if n := datasets(); n != 3 {
		t.Errorf("%d dataset rows; want 3 (the first, the different one, the second project's)", n)
	}

	// The dataset stays while a comparison uses it, and goes with the last.
	if err := e.st.DeleteComparison(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.GetDataset(ctx, *first.DatasetID); err != nil {
		t.Fatalf("deleting the first comparison deleted the dataset the second uses: %v", err)
	}
	if err := e.st.DeleteComparison(ctx, second.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.GetDataset(ctx, *first.DatasetID); err == nil {
		t.Error("the dataset outlived the last comparison using it")
	}
}

// The hash kept at import agrees with the migration's SQL on real
// datasets, code problems' tests (extra fields) included.
func TestDatasetHashAgreesWithSQL(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	for _, rel := range []string{"math500/test.jsonl", "humaneval/HumanEval.jsonl"} {
		path := repoData(t, rel)
		var id int64
		err := st.WithTx(ctx, func(tx *store.Store) error {
			var reused bool
			var err error
			id, reused, err = jobs.ImportDataset(ctx, tx, rel, func() (io.ReadCloser, error) { return os.Open(path) }, 0)
			if err == nil && reused {
				t.Errorf("%s: reused a dataset with no project given", rel)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		d, err := st.GetDataset(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var inSQL []byte
		if err := st.Pool().QueryRow(ctx, `SELECT dataset_content_hash($1)`, id).Scan(&inSQL); err != nil {
			t.Fatal(err)
		}
		if len(d.ContentHash) != 32 || !bytes.Equal(d.ContentHash, inSQL) {
			t.Errorf("%s: content hash %x at import, %x in SQL", rel, d.ContentHash, inSQL)
		}
	}
}

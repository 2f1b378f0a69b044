package jobs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/benchdata"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
)

// startLocal starts workers that also work a local-import queue, as
// `reach import` does.
func startLocal(t *testing.T) (env, string) {
	t.Helper()
	q := jobs.NewLocalQueue()
	return startWith(t, func(c *jobs.Config) { c.LocalQueue = q }), q
}

// importLocal runs the local path of `reach import`: CreateLocal, then
// WaitImported, then the rest of the jobs until the comparison settles.
func (e env) importLocal(t *testing.T, q string, spec intake.Spec) (store.Comparison, error) {
	t.Helper()
	ctx := context.Background()
	id, _, err := intake.CreateLocal(ctx, e.st, e.client, spec, q)
	if err != nil {
		t.Fatal(err)
	}
	werr := intake.WaitImported(ctx, e.st, id)
	return e.wait(t, id), werr
}

// The local path (files read from disk by the importing process) and the
// upload path (files stored in Postgres, then parsed by a job) give the
// same figures on the same pair: a generated MATH500 pair of 8 real texts
// per problem and model, 2 × 4,000 samples, 23 MB (many upload chunks, so
// the upload is read while COPY runs).
func TestLocalImportMatchesUpload(t *testing.T) {
	files, err := benchdata.WriteFiles(t.TempDir(), repoData(t, ""), benchdata.FileSpec{N: 8, RLN: 8, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	e, q := startLocal(t)
	spec := func(name string) intake.Spec {
		return intake.Spec{Name: name, Dataset: intake.LocalFile(files.Dataset), Models: []intake.Model{
			{Name: "base", File: intake.LocalFile(files.Base)}, {Name: "rl", File: intake.LocalFile(files.RL)}}}
	}
	up := e.importReady(t, spec("upload"))
	c, err := e.importLocal(t, q, spec("local"))
	if err != nil || c.Status != store.StatusReady {
		t.Fatalf("local import: %v, status %s: %s", err, c.Status, c.Error)
	}
	local, err := analysis.Build(context.Background(), e.st, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if local.Problems != 500 || up.Problems != 500 || local.KMax != 8 {
		t.Fatalf("problems %d (local) and %d (upload), k max %d; want 500, 500, 8", local.Problems, up.Problems, local.KMax)
	}
	for i := range up.Models {
		u, l := up.Models[i], local.Models[i]
		if l.Pass1 != u.Pass1 || l.Solved != u.Solved || len(l.PassAtK) != len(u.PassAtK) {
			t.Fatalf("%s: local pass@1 %v solved %d, upload pass@1 %v solved %d", u.Name, l.Pass1, l.Solved, u.Pass1, u.Solved)
		}
		for k := range u.PassAtK {
			if l.PassAtK[k] != u.PassAtK[k] {
				t.Errorf("%s pass@%d: local %v, upload %v", u.Name, k+1, l.PassAtK[k].Value, u.PassAtK[k].Value)
			}
		}
	}
	if l, u := local.Pairs[0], up.Pairs[0]; l.Solved != u.Solved || l.Crossover.Label != u.Crossover.Label || l.DeltaSE != u.DeltaSE {
		t.Errorf("local: %+v %q %v; upload: %+v %q %v", l.Solved, l.Crossover.Label, l.DeltaSE, u.Solved, u.Crossover.Label, u.DeltaSE)
	}
	// The base model's texts are real and labelled by their own harness:
	// pass@1 is what the file says, 4,000 samples with their verdicts.
	b, err := os.ReadFile(files.Base)
	if err != nil {
		t.Fatal(err)
	}
	correct := strings.Count(string(b), `"correct":true}`)
	if want := float64(correct) / 4000; local.Models[0].Pass1 < want-1e-9 || local.Models[0].Pass1 > want+1e-9 {
		t.Errorf("base pass@1 %v; the file has %d of 4000 correct (%v)", local.Models[0].Pass1, correct, want)
	}
	// Every text's hash was computed by the importer (on its cores) and is
	// Postgres's md5 of the stored text.
	var badHash int
	if err := e.st.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM samples WHERE text_hash IS DISTINCT FROM md5(completion)::uuid`).Scan(&badHash); err != nil {
		t.Fatal(err)
	}
	if badHash != 0 {
		t.Errorf("%d samples without their text's md5", badHash)
	}
	// Nothing of either file is kept in Postgres.
	var uploads int
	if err := e.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM uploads`).Scan(&uploads); err != nil {
		t.Fatal(err)
	}
	if uploads != 0 {
		t.Errorf("%d uploads left after both imports", uploads)
	}
}

// A bad line in a local file fails the comparison with the file, line and
// field, and nothing of any of its files is kept.
func TestLocalImportBadLine(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "dataset.jsonl")
	if err := os.WriteFile(ds, []byte(`{"problem":"1+1?","answer":"2","unique_id":"a"}`+"\n"+`{"problem":"2+2?","answer":"4","unique_id":"b"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := `{"problem_id":"a","sample_index":0,"completion":"\\boxed{2}","correct":true}` + "\n" +
		`{"problem_id":"b","sample_index":0,"completion":"\\boxed{5}","correct":false}` + "\n"
	bad := `{"problem_id":"a","sample_index":0,"completion":"\\boxed{2}","correct":true}` + "\n" +
		`{"problem_id":"b","sample_index":0,"completion":"\\boxed{4}","correct":true}` + "\n" +
		`{"problem_id":"zz","sample_index":0,"completion":"\\boxed{4}","correct":true}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "base.jsonl"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rl.jsonl"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	e, q := startLocal(t)
	c, err := e.importLocal(t, q, intake.Spec{Name: "bad", Dataset: intake.LocalFile(ds), Models: []intake.Model{
		{Name: "base", File: intake.LocalFile(filepath.Join(dir, "base.jsonl"))},
		{Name: "rl", File: intake.LocalFile(filepath.Join(dir, "rl.jsonl"))}}})
	if c.Status != store.StatusFailed || err == nil {
		t.Fatalf("status %s, WaitImported %v; want failed with an error", c.Status, err)
	}
	if !strings.Contains(c.Error, "rl.jsonl:3") || !strings.Contains(c.Error, `"zz"`) {
		t.Errorf("error %q does not name rl.jsonl:3 and problem \"zz\"", c.Error)
	}
	for _, r := range c.Runs {
		n, _, err := e.st.CountSamples(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("run %s kept %d samples of a failed import", r.ModelName, n)
		}
	}
	prog, err := e.st.ProgressForComparison(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	failed := false
	for _, p := range prog {
		failed = failed || (p.Stage == "import" && p.Status == "failed" && strings.Contains(p.Error, "rl.jsonl:3"))
	}
	if !failed {
		t.Errorf("no failed import bar naming rl.jsonl:3 in %+v", prog)
	}
}

// A `reach import` process that dies while reading its files (its jobs
// stay running in its own queue, without a lease) is noticed by the reaper
// of any other worker, which fails the comparison saying which file's
// process stopped: no other machine can read the file.
func TestLocalImportLostProcess(t *testing.T) {
	files, err := benchdata.WriteFiles(t.TempDir(), repoData(t, ""), benchdata.FileSpec{N: 1, RLN: 1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	e := startWith(t, func(c *jobs.Config) {
		c.Lease = jobs.LeaseConfig{Delay: 100 * time.Millisecond, Renew: 100 * time.Millisecond, TTL: 300 * time.Millisecond, ReapEvery: 300 * time.Millisecond}
	})
	ctx := context.Background()
	// The jobs go into the queue of a process that is not there; they are
	// marked as taken by it an hour ago, as a killed process leaves them.
	id, _, err := intake.CreateLocal(ctx, e.st, e.client, intake.Spec{Name: "lost", Dataset: intake.LocalFile(files.Dataset),
		Models: []intake.Model{{Name: "base", File: intake.LocalFile(files.Base)}, {Name: "rl", File: intake.LocalFile(files.RL)}}},
		jobs.NewLocalQueue())
	if err != nil {
		t.Fatal(err)
	}
	tag, err := e.st.Pool().Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() - interval '1 hour'
		WHERE kind = 'import-local' AND (args->>'comparison_id')::bigint = $1`, id)
	if err != nil || tag.RowsAffected() != 2 {
		t.Fatalf("mark the jobs running: %v (%d rows)", err, tag.RowsAffected())
	}
	c := e.wait(t, id)
	if c.Status != store.StatusFailed || !strings.Contains(c.Error, "stopped before the import finished") ||
		!strings.Contains(c.Error, files.Dir) {
		t.Fatalf("status %s, error %q; want failed naming the stopped process and the file", c.Status, c.Error)
	}
	if err := intake.WaitImported(ctx, e.st, id); err == nil || !strings.Contains(err.Error(), "stopped before") {
		t.Errorf("WaitImported: %v", err)
	}
}

// A large local file COPYed by several transactions at once (here three,
// from any size) that turns out bad after each of them stored batches
// keeps nothing and names the line: a sample repeated thousands of lines
// after its twin (which a writer of its problem stored in its own
// transaction), and a line that is not JSON at the end.
func TestLocalImportCopyStreamsFail(t *testing.T) {
	files, err := benchdata.WriteFiles(t.TempDir(), repoData(t, ""), benchdata.FileSpec{N: 8, RLN: 8, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(files.Base)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if len(lines) < 4000 {
		t.Fatalf("%d lines; want 4,000 (two batches at least)", len(lines))
	}
	dir := t.TempDir()
	dup := filepath.Join(dir, "dup.jsonl")
	if err := os.WriteFile(dup, []byte(strings.Join(lines[:3990], "")+lines[7]+strings.Join(lines[3990:], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	notJSON := filepath.Join(dir, "notjson.jsonl")
	if err := os.WriteFile(notJSON, append(b, "{\"problem_id\": oops}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	jobs.SetMultiWriterBytes(t, 1)
	q := jobs.NewLocalQueue()
	e := startWith(t, func(c *jobs.Config) { c.LocalQueue = q; c.ImportWriters = 3 })
	for _, tc := range []struct{ path, want string }{
		{dup, "dup.jsonl:3991"},
		{notJSON, "notjson.jsonl:4001"},
	} {
		c, err := e.importLocal(t, q, intake.Spec{Name: filepath.Base(tc.path), Dataset: intake.LocalFile(files.Dataset), Models: []intake.Model{
			{Name: "base", File: intake.LocalFile(tc.path)}, {Name: "rl", File: intake.LocalFile(files.RL)}}})
		if c.Status != store.StatusFailed || err == nil {
			t.Fatalf("%s: status %s, WaitImported %v; want failed with an error", tc.path, c.Status, err)
		}
		if !strings.Contains(c.Error, tc.want) {
			t.Errorf("error %q does not name %s", c.Error, tc.want)
		}
		for _, r := range c.Runs {
			n, _, err := e.st.CountSamples(context.Background(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%s: run %s kept %d samples of a failed import", tc.path, r.ModelName, n)
			}
		}
	}
}

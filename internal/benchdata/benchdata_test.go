package benchdata_test

import (
	"context"
	"testing"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/benchdata"
	"github.com/reach-lab/reach/internal/follow"
	"github.com/reach-lab/reach/internal/testdb"
)

// TestCreateTrainingRunRealTexts: a training run is stored as a followed
// one (the base model, then checkpoints named by step), every sample has
// one of the real completions, the runs written at once on two
// connections hold every sample, and counts agree with them.
func TestCreateTrainingRunRealTexts(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	id, tm, err := benchdata.Create(ctx, st, benchdata.Spec{Models: 4, N: 6, Problems: 30, Texts: true, Training: true,
		RealTexts: "../testfiles/data", Workers: 2, Seed: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tm.Samples != 4*6*30 {
		t.Errorf("%d samples written; want %d", tm.Samples, 4*6*30)
	}
	c, err := st.GetComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Runs) != 4 || c.Runs[0].Role != "base" {
		t.Fatalf("runs %+v; want the base model and 3 checkpoints", c.Runs)
	}
	for i, r := range c.Runs[1:] {
		step := 100 * (i + 1)
		if r.Role != "checkpoint" || r.Step == nil || *r.Step != step || r.ModelName != follow.CheckpointName("SimpleRL-Zoo (sim)", step) {
			t.Errorf("run %d: %s, role %s, step %v; want checkpoint %q", i+1, r.ModelName, r.Role, r.Step, follow.CheckpointName("SimpleRL-Zoo (sim)", step))
		}
	}
	// The comparison page's training view: pass@k by step over the base
	// model and every checkpoint.
	rep, err := analysis.Build(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Trajectory) != 4 {
		t.Errorf("trajectory of %d points; want the base model and 3 checkpoints", len(rep.Trajectory))
	}
	var n, short, counted, correct, correctN int64
	if err := st.Pool().QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE octet_length(completion) < 200),
			count(*) FILTER (WHERE s.status = 'correct'), (SELECT sum(n) FROM run_counts rc JOIN runs r ON r.id = rc.run_id WHERE r.comparison_id = $1),
			(SELECT sum(c) FROM run_counts rc JOIN runs r ON r.id = rc.run_id WHERE r.comparison_id = $1)
		FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.comparison_id = $1`, id).Scan(&n, &short, &correct, &counted, &correctN); err != nil {
		t.Fatal(err)
	}
	if n != 720 || counted != 720 || correct != correctN || short > 0 {
		t.Errorf("%d samples (%d counted), %d correct (%d counted), %d shorter than 200 bytes; want 720, equal counts, real texts", n, counted, correct, correctN, short)
	}
}

// TestCopyRealTexts: n rows with real texts into a table like samples,
// the text bytes it reports being the stored ones.
func TestCopyRealTexts(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	if _, err := st.Pool().Exec(ctx, `CREATE TABLE texts_like (LIKE samples INCLUDING DEFAULTS INCLUDING INDEXES)`); err != nil {
		t.Fatal(err)
	}
	rows, bytes, err := benchdata.CopyRealTexts(ctx, st, "texts_like", "../testfiles/data", 1200, 1)
	if err != nil {
		t.Fatal(err)
	}
	var n, b int64
	if err := st.Pool().QueryRow(ctx, `SELECT count(*), sum(octet_length(completion)) FROM texts_like`).Scan(&n, &b); err != nil {
		t.Fatal(err)
	}
	if rows != 1200 || n != 1200 || b != bytes || bytes/n < 500 {
		t.Errorf("%d rows reported, %d stored, %d text bytes reported, %d stored; want 1200 real texts", rows, n, bytes, b)
	}
	if _, _, err := benchdata.CopyRealTexts(ctx, st, "texts_like", "../testfiles/data", 0, 1); err == nil {
		t.Error("0 samples accepted")
	}
}

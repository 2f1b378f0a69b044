package store_test

import (
	"context"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

func TestRefreshRunQuality(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	pid, err := st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cid, runs, pids := tiny(t, st, pid)
	// Run 1 (rl): three more samples on p0 with what the figures count.
	extra := []store.Sample{
		{RunID: runs[1].ID, ProblemID: pids[0], SampleIndex: 3, Completion: "cut off", FinishReason: "length", Status: store.SampleIncorrect,
			Extracted: "4", Rule: "last-number", VerdictSource: "reach-math/1"},
		{RunID: runs[1].ID, ProblemID: pids[0], SampleIndex: 4, Completion: "no answer", Status: store.SampleUnparseable, VerdictSource: "reach-math/1"},
		{RunID: runs[1].ID, ProblemID: pids[0], SampleIndex: 5, Completion: "$x$", Status: store.SampleCorrect,
			Extracted: "x", Rule: "last-math+fallback", VerdictSource: "reach-math/1"},
	}
	if err := st.InsertSamples(ctx, extra); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if err := st.RefreshRunQuality(ctx, r.ID, []string{"last-math", "last-number"}); err != nil {
			t.Fatal(err)
		}
	}
	qs, err := st.RunQualities(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	// rl: p0 has "x" ×3 + three distinct texts = 4 distinct of 6; p1 "x" ×3 = 1 distinct of 3.
	q := qs[runs[1].ID]
	if q.Samples != 9 || q.Truncated != 1 || q.FallbackGraded != 2 || q.NoAnswer != 1 || q.DistinctMin != 1 ||
		q.DistinctMinN != 3 || q.DistinctMinProblem != pids[1] || q.RepeatedProblems != 2 {
		t.Errorf("rl quality %+v", q)
	}
	// base: 6 samples, all "x", file verdicts: nothing truncated, no fallback, no "no answer".
	if b := qs[runs[0].ID]; b.Samples != 6 || b.Truncated != 0 || b.FallbackGraded != 0 || b.NoAnswer != 0 || b.DistinctMin != 1 {
		t.Errorf("base quality %+v", b)
	}
	// A run without samples has no row, and an old row goes.
	if _, err := st.Pool().Exec(ctx, `DELETE FROM samples WHERE run_id = $1`, runs[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := st.RefreshRunQuality(ctx, runs[0].ID, nil); err != nil {
		t.Fatal(err)
	}
	if qs, _ = st.RunQualities(ctx, cid); len(qs) != 1 {
		t.Errorf("qualities %+v, want only the rl run's", qs)
	}
}

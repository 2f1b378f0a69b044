package store_test

import (
	"context"
	"fmt"
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
	if q.Samples != 9 || q.Truncated == nil || *q.Truncated != 1 || q.FallbackGraded != 2 || q.NoAnswer != 1 || q.DistinctMin != 1 ||
		q.DistinctMinN != 3 || q.DistinctMinProblem != pids[1] || q.RepeatedProblems != 2 {
		t.Errorf("rl quality %+v", q)
	}
	// base: 6 samples, all "x", file verdicts, no finish reason recorded: truncation unknown (not 0),
	// no fallback, no "no answer".
	if b := qs[runs[0].ID]; b.Samples != 6 || b.Truncated != nil || b.FallbackGraded != 0 || b.NoAnswer != 0 || b.DistinctMin != 1 {
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

// Duplicate figures: a problem counts when it has at least 8 samples whose
// completions average 32 bytes or more; it is duplicated when it has at most
// half as many distinct texts as samples. Seeds are stored per sample.
func TestRunQualityDuplicates(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	pid, err := st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cid, runs, pids := tiny(t, st, pid)
	if _, err := st.Pool().Exec(ctx, `DELETE FROM samples`); err != nil {
		t.Fatal(err)
	}
	long := "Let me work this out step by step: the answer is \\boxed{2}, text number "
	var batch []store.Sample
	for i := range 10 {
		seed := int64(1000 + i)
		// base p0: 10 samples, 5 distinct long texts (each twice): duplicated.
		batch = append(batch, store.Sample{RunID: runs[0].ID, ProblemID: pids[0], SampleIndex: i, Seed: &seed,
			Completion: fmt.Sprint(long, i%5), Status: store.SampleCorrect})
		// base p1: 10 samples of one short text ("2"): repeats legitimately, not checked.
		batch = append(batch, store.Sample{RunID: runs[0].ID, ProblemID: pids[1], SampleIndex: i, Completion: "2", Status: store.SampleIncorrect})
		// rl p0: 10 samples, 6 distinct long texts: checked, not duplicated.
		batch = append(batch, store.Sample{RunID: runs[1].ID, ProblemID: pids[0], SampleIndex: i, Completion: fmt.Sprint(long, min(i, 5)), Status: store.SampleCorrect})
	}
	// rl p1: 7 samples, all one long text: too few to tell.
	for i := range 7 {
		batch = append(batch, store.Sample{RunID: runs[1].ID, ProblemID: pids[1], SampleIndex: i, Completion: long, Status: store.SampleCorrect})
	}
	if _, err := st.AddSamples(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if err := st.RefreshRunQuality(ctx, r.ID, nil); err != nil {
			t.Fatal(err)
		}
	}
	qs, err := st.RunQualities(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	b, r := qs[runs[0].ID], qs[runs[1].ID]
	if b.DupChecked == nil || *b.DupChecked != 1 || *b.DupProblems != 1 || b.DupWorstProblem != pids[0] || b.DupWorstN != 10 || b.DupWorstDistinct != 5 {
		t.Errorf("base duplicates: checked %v problems %v worst %d (%d of %d)", b.DupChecked, b.DupProblems, b.DupWorstProblem, b.DupWorstDistinct, b.DupWorstN)
	}
	if r.DupChecked == nil || *r.DupChecked != 1 || *r.DupProblems != 0 || r.DupWorstProblem != 0 {
		t.Errorf("rl duplicates: checked %v problems %v worst %d", r.DupChecked, r.DupProblems, r.DupWorstProblem)
	}
	got, err := st.SamplesForProblem(ctx, runs[0].ID, pids[0], 20)
	if err != nil || len(got) != 10 {
		t.Fatalf("%d samples, %v", len(got), err)
	}
	for _, s := range got {
		if s.Seed == nil || *s.Seed != int64(1000+s.SampleIndex) {
			t.Errorf("sample %d: seed %v; want %d", s.SampleIndex, s.Seed, 1000+s.SampleIndex)
		}
	}
	if got, _ := st.SamplesForProblem(ctx, runs[0].ID, pids[1], 1); len(got) != 1 || got[0].Seed != nil {
		t.Errorf("unseeded sample: %+v", got)
	}
}

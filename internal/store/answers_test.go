package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// AnswersForRun sends one row per answer group; the answers it returns
// keep the order in which each (verdict, answer) first appears.
func TestAnswersForRunFirstAppearance(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	pid, err := st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, runs, pids := tiny(t, st, pid)
	// Samples 3.. of run 1 on p0, in this order: "b", "a", correct "x", "b", "a", "", file answer "c".
	var extra []store.Sample
	for i, a := range []string{"b", "a", "x", "b", "a", "", "c"} {
		s := store.Sample{RunID: runs[1].ID, ProblemID: pids[0], SampleIndex: 3 + i, Completion: "t", Status: store.SampleIncorrect,
			Extracted: a, VerdictSource: "reach-math/1"}
		if a == "x" {
			s.Status = store.SampleCorrect
		}
		if a == "c" {
			s.Extracted, s.FileExtracted = "", "c"
		}
		extra = append(extra, s)
	}
	if err := st.InsertSamples(ctx, extra); err != nil {
		t.Fatal(err)
	}
	before, err := st.SamplesForProblem(ctx, runs[1].ID, pids[0], 100)
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.AnswersForRun(ctx, runs[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	as := got[pids[0]]
	if len(as) != len(before) {
		t.Fatalf("%d answers for %d samples", len(as), len(before))
	}
	// First appearances in sample order, and the multiset of (verdict, answer).
	first := func(keys []string) []string {
		var out []string
		for _, k := range keys {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
		return out
	}
	key := func(correct bool, a string) string {
		if correct {
			return "correct:" + a
		}
		return "wrong:" + a
	}
	var want, have []string
	slices.SortFunc(before, func(a, b store.Sample) int { return a.SampleIndex - b.SampleIndex })
	for _, s := range before {
		a := s.Extracted
		if a == "" {
			a = s.FileExtracted
		}
		want = append(want, key(s.Status == store.SampleCorrect, a))
	}
	for _, a := range as {
		have = append(have, key(a.Correct, a.Extracted))
	}
	if !slices.Equal(first(have), first(want)) {
		t.Errorf("first appearances %v, want %v", first(have), first(want))
	}
	slices.Sort(have)
	slices.Sort(want)
	if !slices.Equal(have, want) {
		t.Errorf("answers %v, want %v", have, want)
	}
}

// The statistics job reads a run's answers from its answer groups; they
// must be what scanning its samples gives (answers without surrounding
// white space), in the same order: the same answer both correct and not
// (an override), answers from the file, no answer, and samples inserted
// out of index order.
func TestAnswersFromGroupsAsFromSamples(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	pid, err := st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, runs, pids := tiny(t, st, pid)
	run := runs[0].ID
	var extra []store.Sample
	for i, a := range []string{"7", "b", "a", "x", "b", "a", "", "c", "x", "7", "a"} {
		idx := 40 - 3*i // inserted in reverse index order
		s := store.Sample{RunID: run, ProblemID: pids[i%2], SampleIndex: idx, Completion: "t", Status: store.SampleIncorrect,
			Extracted: a, VerdictSource: "reach-math/1"}
		switch {
		case a == "x" || (a == "7" && i == 0):
			s.Status = store.SampleCorrect
		case a == "c":
			s.Extracted, s.FileExtracted = "", "c"
		}
		extra = append(extra, s)
	}
	if err := st.InsertSamples(ctx, extra); err != nil {
		t.Fatal(err)
	}
	if err := st.AggregateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	scanned, err := st.AnswersForRun(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	grouped, ok, err := st.AnswersFromGroups(ctx, run)
	if err != nil || !ok {
		t.Fatalf("ok %v, err %v", ok, err)
	}
	if len(grouped) != len(scanned) {
		t.Fatalf("%d problems from groups, %d from samples", len(grouped), len(scanned))
	}
	for p, want := range scanned {
		if got := grouped[p]; !slices.Equal(got, want) {
			t.Errorf("problem %d: from groups %+v\nfrom samples %+v", p, got, want)
		}
	}
	// Groups aggregated before they kept their first samples: the caller must scan.
	if _, err := st.Pool().Exec(ctx, `UPDATE run_answers SET first_correct = NULL WHERE run_id = $1 AND correct > 0`, run); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := st.AnswersFromGroups(ctx, run); err != nil || ok {
		t.Errorf("without first samples: ok %v, err %v; want not ok", ok, err)
	}
}

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

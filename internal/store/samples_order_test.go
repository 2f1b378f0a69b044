package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// The problem page shows a model's counted solves first, then the correct
// verdicts its grading policy does not count, then the rest, each by
// sample index; a limit keeps the first of that order, also with an answer
// filter, and the query for every run of a comparison gives each run's.
func TestProblemSamplesOrder(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	cid, runs, pids := tiny(t, st, 0)
	run, pid := runs[0].ID, pids[1] // tiny's base run has no solve on its second problem
	if _, err := st.Pool().Exec(ctx, `DELETE FROM samples WHERE run_id = $1 AND problem_id = $2`, run, pid); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE runs SET has_texts = true WHERE comparison_id = $1`, cid); err != nil {
		t.Fatal(err)
	}
	// index: 0 wrong, 1 correct by a fallback rule (not counted under the
	// strict policy), 2 counted, 3 wrong, 4 counted, 5 cut by the length limit.
	mk := func(i int, status, rule, finish, answer string) store.Sample {
		return store.Sample{RunID: run, ProblemID: pid, SampleIndex: i, Completion: "x", Status: status, Rule: rule,
			FinishReason: finish, Extracted: answer, VerdictSource: "verifier"}
	}
	err := st.InsertSamples(ctx, []store.Sample{
		mk(0, store.SampleIncorrect, "boxed", "stop", "4"), mk(1, store.SampleCorrect, "last-number", "stop", "3"),
		mk(2, store.SampleCorrect, "boxed", "stop", "3"), mk(3, store.SampleIncorrect, "boxed", "stop", "5"),
		mk(4, store.SampleCorrect, "boxed", "stop", "3"), mk(5, store.SampleCorrect, "boxed", "length", "3")})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AggregateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	indexes := func(ss []store.Sample) []int {
		var out []int
		for _, x := range ss {
			out = append(out, x.SampleIndex)
		}
		return out
	}
	for _, tc := range []struct {
		limit  int
		answer *string
		want   []int
	}{
		{10, nil, []int{2, 4, 1, 5, 0, 3}},
		{3, nil, []int{2, 4, 1}},
		{1, nil, []int{2}},
		{10, ptr("3"), []int{2, 4, 1, 5}},
		{10, ptr("5"), []int{3}},
	} {
		var got []store.Sample
		if tc.answer == nil {
			got, err = st.SamplesForProblem(ctx, run, pid, tc.limit)
		} else {
			got, err = st.SamplesWithAnswer(ctx, run, pid, *tc.answer, tc.limit)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(indexes(got), tc.want) {
			t.Errorf("limit %d, answer %v: samples %v; want %v", tc.limit, tc.answer, indexes(got), tc.want)
		}
		c, err := st.GetComparison(ctx, cid)
		if err != nil {
			t.Fatal(err)
		}
		var all map[int64][]store.Sample
		if err := st.Batch(ctx, st.ProblemSamplesInto(store.ProblemRunsShown(c, nil), pid, tc.limit, tc.answer, &all)); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(indexes(all[run]), tc.want) {
			t.Errorf("limit %d, answer %v, every run: samples %v; want %v", tc.limit, tc.answer, indexes(all[run]), tc.want)
		}
		// Models named by place: only theirs (the problem page reads the
		// texts of the models it shows open, not all of a training run's).
		var first, second map[int64][]store.Sample
		if err := st.Batch(ctx, st.ProblemSamplesInto(store.ProblemRunsShown(c, []int64{0}), pid, tc.limit, tc.answer, &first),
			st.ProblemSamplesInto(store.ProblemRunsShown(c, []int64{1}), pid, tc.limit, tc.answer, &second)); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(indexes(first[run]), tc.want) || len(first) != 1 {
			t.Errorf("limit %d, answer %v, the first model: %v; want %v of run %d only", tc.limit, tc.answer, first, tc.want, run)
		}
		if _, ok := second[run]; ok || len(second) != len(all)-1 {
			t.Errorf("limit %d, answer %v, the second model: runs %d; want every run but %d", tc.limit, tc.answer, len(second), run)
		}
	}
	got, _ := st.SamplesForProblem(ctx, run, pid, 10)
	if want := []string{"", "", store.UncountedFallback, store.UncountedLength, "", ""}; !slices.Equal(uncounted(got), want) {
		t.Errorf("uncounted %v; want %v", uncounted(got), want)
	}
	answers, err := st.AnswerCounts(ctx, cid, pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range answers {
		if a.RunID == run && a.Answer == "3" && (a.N != 4 || a.Correct != 4 || a.Fallback != 1 || a.Truncated != 1) {
			t.Errorf("answer 3: %+v; want 4 samples, 4 correct, 1 fallback, 1 truncated", a)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func uncounted(ss []store.Sample) []string {
	var out []string
	for _, x := range ss {
		out = append(out, x.Uncounted)
	}
	return out
}

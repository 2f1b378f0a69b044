package store_test

import (
	"context"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// The token sums come with the counts: per run and problem, the samples
// with a token count and their sum, a sample stored with 0 ("the file gave
// none") in neither; a run imported as counts has none.
func TestTokenSums(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	did, err := st.CreateDataset(ctx, "tokens", "tokens.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.InsertProblems(ctx, did, []store.Problem{{Idx: 0, Key: "p0", Statement: "1+1", Reference: "2"},
		{Idx: 1, Key: "p1", Statement: "1+2", Reference: "3"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishDataset(ctx, did); err != nil {
		t.Fatal(err)
	}
	cid, err := st.CreateComparison(ctx, store.NewComparison{Name: "tokens", DatasetID: did, Status: store.StatusReady,
		Runs: []store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}, {ModelName: "counts", Role: "rl"}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.GetComparison(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := st.Problems(ctx, did, false)
	if err != nil {
		t.Fatal(err)
	}
	base, rl, counts := c.Runs[0].ID, c.Runs[1].ID, c.Runs[2].ID
	tokens := map[int64][2][]int{ // run → per problem, each sample's completion_tokens (0 = none)
		base: {{100, 0, 300}, {50, 50, 50}},
		rl:   {{0, 0, 0}, {0, 0, 0}},
	}
	var batch []store.Sample
	for run, per := range tokens {
		for j, p := range ps {
			for i, tk := range per[j] {
				status := store.SampleIncorrect
				if i == 0 {
					status = store.SampleCorrect
				}
				batch = append(batch, store.Sample{RunID: run, ProblemID: p.ID, SampleIndex: i, Completion: "x", Status: status, CompletionTokens: tk})
			}
		}
	}
	if err := st.InsertSamples(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for _, run := range []int64{base, rl} {
		if err := st.AggregateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.InsertCounts(ctx, []store.Count{{RunID: counts, ProblemID: ps[0].ID, N: 8, C: 2}, {RunID: counts, ProblemID: ps[1].ID, N: 8, C: 0}}); err != nil {
		t.Fatal(err)
	}

	got, err := st.TokenSums(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	// Only problems with token counts: the rl run's samples have none, and
	// the counts run has no samples (callers fill in n samples without tokens).
	want := map[int64][]store.TokenSum{
		base: {{RunID: base, ProblemID: ps[0].ID, Samples: 3, TokenSamples: 2, Tokens: 400}, {RunID: base, ProblemID: ps[1].ID, Samples: 3, TokenSamples: 3, Tokens: 150}},
	}
	if len(got) != len(want) {
		t.Fatalf("token sums of %d runs, want %d: %+v", len(got), len(want), got)
	}
	for run, w := range want {
		if len(got[run]) != len(w) {
			t.Fatalf("run %d: %+v, want %+v", run, got[run], w)
		}
		for i := range w {
			if got[run][i] != w[i] {
				t.Errorf("run %d problem %d: %+v, want %+v", run, i, got[run][i], w[i])
			}
		}
	}
	// The counts are what they were: the sums ride along.
	if c0, c1 := cOf(t, st, cid, base, ps[0].ID), cOf(t, st, cid, base, ps[1].ID); c0 != 1 || c1 != 1 {
		t.Errorf("base c = %d, %d; want 1, 1", c0, c1)
	}

	// Aggregating again (a re-verification) keeps the sums.
	if err := st.AggregateRun(ctx, base); err != nil {
		t.Fatal(err)
	}
	again, err := st.TokenSums(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	if again[base][0] != want[base][0] || again[base][1] != want[base][1] {
		t.Errorf("after aggregating again: %+v, want %+v", again[base], want[base])
	}
}

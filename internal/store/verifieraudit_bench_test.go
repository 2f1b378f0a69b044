package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/reach-lab/reach/internal/audit"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// BenchmarkAuditScope500x256 times what the audit page and a start cost on
// a comparison of 500 problems × 256 samples × 2 models (256,000 samples,
// 100 problems one-model-only): counting the strata (every view of the page
// before the audit runs) and choosing the items with m = 1,000.
//
//	go test -run XXX -bench AuditScope -benchtime 3x ./internal/store/
func BenchmarkAuditScope500x256(b *testing.B) {
	st, _ := testdb.New(b)
	ctx := context.Background()
	did, err := st.CreateDataset(ctx, "big", "big.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	var ps []store.Problem
	for i := range 500 {
		ps = append(ps, store.Problem{Idx: i, Key: fmt.Sprintf("p%d", i), Statement: "q", Reference: "1"})
	}
	if err := st.InsertProblems(ctx, did, ps); err != nil {
		b.Fatal(err)
	}
	if err := st.FinishDataset(ctx, did); err != nil {
		b.Fatal(err)
	}
	cid, err := st.CreateComparison(ctx, store.NewComparison{Name: "big", DatasetID: did, Status: store.StatusReady,
		Runs: []store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}})
	if err != nil {
		b.Fatal(err)
	}
	c, _ := st.GetComparison(ctx, cid)
	stored, _ := st.Problems(ctx, did, false)
	var pids, deciding []int64
	for j, p := range stored {
		pids = append(pids, p.ID)
		if j%5 == 0 {
			deciding = append(deciding, p.ID)
		}
	}
	for m, r := range c.Runs {
		var batch []store.Sample
		for j, p := range stored {
			for i := range 256 {
				status := store.SampleIncorrect
				if (i+j+m)%3 == 0 {
					status = store.SampleCorrect
				}
				batch = append(batch, store.Sample{RunID: r.ID, ProblemID: p.ID, SampleIndex: i, Completion: "The answer is \\boxed{1}.", Status: status})
			}
		}
		if err := st.InsertSamples(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	var rest int64
	b.Run("count", func(b *testing.B) {
		for range b.N {
			if _, rest, err = st.AuditScope(ctx, cid, pids, deciding); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("choose", func(b *testing.B) {
		for range b.N {
			if _, err := st.NewVerifierAudit(ctx, cid, 1000, 1, 0, pids, deciding, audit.RandomOrdinals(rest, 1000, 1)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

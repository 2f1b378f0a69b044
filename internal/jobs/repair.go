package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/reach-lab/reach/internal/store"
)

// repairStuck moves on every comparison that sits in a working state no job
// will finish: its runs are checked one by one and the job each needs is
// enqueued (verification of pending samples, aggregation), or the
// comparison is marked ready or failed with the reason.
func repairStuck(ctx context.Context, st *store.Store, after time.Duration) error {
	ids, err := st.StuckComparisons(ctx, after)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := repairComparison(ctx, st, id); err != nil {
			slog.Error("repair stuck comparison", "comparison", id, "err", err)
		}
	}
	return nil
}

func repairComparison(ctx context.Context, st *store.Store, id int64) error {
	c, err := st.GetComparison(ctx, id)
	if err != nil {
		return err
	}
	slog.Warn("comparison stuck without a job; repairing", "comparison", id, "status", c.Status)
	if c.Status == store.StatusPending || c.Status == store.StatusImporting {
		return st.WithTx(ctx, func(tx *store.Store) error {
			if c.DatasetID == nil && c.DatasetUploadID == nil {
				return tx.SetComparisonStatus(ctx, id, store.StatusFailed, "the import stopped and its dataset file is gone: create the comparison again")
			}
			return enqueue(ctx, tx, ImportArgs{ComparisonID: id})
		})
	}
	if c.Status == store.StatusSampling && isAdaptive(c.Sampling) {
		// Between two rounds of an adaptive design no chunk is open, yet the
		// design may go on: StartSampling enqueues the open chunks, plans the
		// next round, or finishes the runs when the design is done.
		return st.WithTx(ctx, func(tx *store.Store) error { return StartSampling(ctx, nil, tx, c) })
	}
	var follow []river.JobArgs
	for _, r := range c.Runs {
		if r.Status == store.StatusReady || r.Status == store.StatusFailed {
			continue
		}
		_, pending, err := st.CountSamples(ctx, r.ID)
		if err != nil {
			return err
		}
		open, err := st.OpenChunks(ctx, r.ID)
		if err != nil {
			return err
		}
		switch {
		case open > 0 && c.Status == store.StatusSampling:
			// Sampling lost its jobs: enqueue the open chunks again.
			return st.WithTx(ctx, func(tx *store.Store) error { return StartSampling(ctx, nil, tx, c) })
		case pending > 0 && r.HasTexts:
			follow = append(follow, VerifyArgs{RunID: r.ID, ComparisonID: id})
		default:
			follow = append(follow, AggregateArgs{RunID: r.ID, ComparisonID: id})
		}
	}
	if len(follow) == 0 {
		// Every run is settled (e.g. a re-verification that had nothing to
		// verify): the comparison is what its runs are.
		if err := st.MarkComparisonReadyIfDone(ctx, id); err != nil {
			return err
		}
		got, err := st.GetComparison(ctx, id)
		if err != nil {
			return err
		}
		if got.Status != store.StatusReady {
			return st.SetComparisonStatus(ctx, id, store.StatusFailed, fmt.Sprintf("stopped while %s: a model failed; see its row", c.Status))
		}
		return startStatsIfReady(ctx, st, id)
	}
	return st.WithTx(ctx, func(tx *store.Store) error { return enqueue(ctx, tx, follow...) })
}

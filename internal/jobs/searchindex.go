package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reach-lab/reach/internal/store"
)

// SearchIndexArgs brings the trigram indexes of the search in completion
// texts up to date: it drops those of runs that are gone and builds one
// for each run with texts of a ready comparison that has none
// (store.BuildSearchIndex), one after another. It is enqueued when a
// comparison becomes ready and when one is deleted, and runs every
// SearchIndexInterval, so indexes appear after an import, not during it.
type SearchIndexArgs struct{}

// Kind implements river.JobArgs.
func (SearchIndexArgs) Kind() string { return "search_index" }

// SearchIndexQueue is the queue of SearchIndexArgs: one job at a time
// per process, so that index builds never hold a core an import wants.
const SearchIndexQueue = "search_index"

// SearchIndexInterval is how often the indexes are brought up to date
// without being asked (comparisons from before this job, a job enqueued
// while another ran).
const SearchIndexInterval = time.Minute

// InsertOpts: at most one such job queued or running.
func (SearchIndexArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: SearchIndexQueue, MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
			rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled}}}
}

func searchIndexPeriodic() []*river.PeriodicJob {
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(SearchIndexInterval),
		func() (river.JobArgs, *river.InsertOpts) { return SearchIndexArgs{}, nil },
		&river.PeriodicJobOpts{RunOnStart: true})}
}

// SearchIndexWorker works SearchIndexArgs.
type SearchIndexWorker struct {
	river.WorkerDefaults[SearchIndexArgs]
	st *store.Store
}

// Timeout: building the index of a million samples takes minutes.
func (w *SearchIndexWorker) Timeout(*river.Job[SearchIndexArgs]) time.Duration { return longTimeout }

// Work drops the partitions and indexes of deleted runs, then builds the missing ones until none is
// left (a comparison that became ready meanwhile included).
func (w *SearchIndexWorker) Work(ctx context.Context, _ *river.Job[SearchIndexArgs]) error {
	if n, err := w.st.DropOrphanSamplePartitions(ctx); err != nil {
		return err
	} else if n > 0 {
		slog.Info("dropped sample partitions of deleted runs", "partitions", n)
	}
	if n, err := w.st.DropOrphanSearchIndexes(ctx); err != nil {
		return err
	} else if n > 0 {
		slog.Info("dropped search indexes of deleted runs", "indexes", n)
	}
	for {
		runs, err := w.st.RunsNeedingSearchIndex(ctx, 0, 1)
		if err != nil || len(runs) == 0 {
			return err
		}
		start := time.Now()
		if _, err := w.st.BuildSearchIndex(ctx, runs[0]); err != nil {
			return err
		}
		slog.Info("built search index", "run", runs[0], "seconds", time.Since(start).Seconds())
	}
}

// StartSearchIndex enqueues a SearchIndexArgs (a no-op while one is queued
// or running): after a comparison is deleted, to drop its indexes.
func StartSearchIndex(ctx context.Context, client *Client) error {
	if _, err := client.Insert(ctx, SearchIndexArgs{}, nil); err != nil {
		return fmt.Errorf("enqueue search index job: %w", err)
	}
	return nil
}

// startSearchIndexIfTexts enqueues a SearchIndexArgs once comparison c,
// ready, has runs with texts.
func startSearchIndexIfTexts(ctx context.Context, c store.Comparison) error {
	if !c.HasTexts() {
		return nil
	}
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("river client: %w", err)
	}
	return StartSearchIndex(ctx, client)
}

package jobs

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reach-lab/reach/internal/metrics"
	"github.com/reach-lab/reach/internal/store"
)

// kinds are the kinds of every job NewClient registers: the only values
// the kind label of a metric takes (with "other").
var kinds = func() []string {
	var out []string
	for _, a := range []river.JobArgs{ImportArgs{}, ImportRunArgs{}, ImportChunkArgs{}, ImportLocalArgs{}, VerifyArgs{}, AggregateArgs{},
		ReverifyArgs{}, StatsArgs{}, SampleArgs{}, AdaptiveRoundArgs{}, JudgeArgs{}, ScoreArgs{}, TokenArgs{}, AuditArgs{}, ReapArgs{}, SearchIndexArgs{}} {
		out = append(out, a.Kind())
	}
	return out
}()

// metricsMiddleware counts every job attempt this process works, and
// times it, by kind and by what River does with the job next.
func metricsMiddleware() rivertype.WorkerMiddleware {
	return river.WorkerMiddlewareFunc(func(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
		start := time.Now()
		kind := job.Kind
		if !slices.Contains(kinds, kind) {
			kind = "other"
		}
		panicked := true
		defer func() {
			if panicked { // River recovers it and fails the attempt
				metrics.JobFinished(kind, jobOutcome(job, errors.New("panic")), time.Since(start))
			}
		}()
		err := doInner(ctx)
		panicked = false
		metrics.JobFinished(kind, jobOutcome(job, err), time.Since(start))
		return err
	})
}

// jobOutcome names what River makes of an attempt that returned err.
func jobOutcome(job *rivertype.JobRow, err error) string {
	var cancel *rivertype.JobCancelError
	var snooze *rivertype.JobSnoozeError
	switch {
	case err == nil:
		return "completed"
	case errors.As(err, &cancel):
		return "cancelled"
	case errors.As(err, &snooze):
		return "snoozed"
	case job.Attempt >= job.MaxAttempts:
		return "discarded"
	}
	return "retry"
}

// QueueMetrics is a Prometheus collector of the River jobs in st's
// database that have not ended (every worker process's), read at each
// scrape: jobs by kind and state, and the depth of each queue.
func QueueMetrics(st *store.Store, log *slog.Logger) prometheus.Collector {
	return metrics.NewQueueCollector(func(ctx context.Context) ([]metrics.JobCount, error) {
		counts, err := st.UnfinishedJobs(ctx)
		out := make([]metrics.JobCount, len(counts))
		for i, c := range counts {
			out[i] = metrics.JobCount{Kind: c.Kind, Queue: c.Queue, State: c.State, Count: c.Count, OldestSeconds: c.OldestSeconds}
		}
		return out, err
	}, kinds, 3*time.Second, log)
}

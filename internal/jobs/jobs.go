// Package jobs holds Reach's River job arguments and workers: ImportJob
// (uploaded files -> problems, samples or counts), VerifyJob (samples ->
// verdicts) and AggregateJob (verdicts -> per-problem counts n, c).
//
// Every job is idempotent: an import runs in one transaction that first
// clears what a previous attempt of it may have written; verification only
// picks samples still pending; aggregation recomputes counts from scratch.
package jobs

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
)

// Client is the River client type Reach uses.
type Client = river.Client[pgx.Tx]

// Config configures NewClient.
type Config struct {
	// Workers is how many jobs run at once in this process; 0 makes an
	// insert-only client (a web process that leaves work to `reach worker`).
	Workers int
	// Verifier grades samples that arrive without a verdict (in Reach a
	// verify.Dispatch: math and choice problems by the math verifier, code
	// problems in the sandbox).
	Verifier verify.Verifier
	// SamplingWorkers is how many SampleJobs (requests to inference
	// servers) run at once in this process; 0 means 32 when Workers > 0.
	SamplingWorkers int
	// EndpointDownAfter is how long a model's endpoint may stay unreachable
	// (connections refused, DNS failing; no answer at all) before its run
	// and the comparison fail saying so; 0 means sampling.DefaultDownAfter.
	EndpointDownAfter time.Duration
	// JobTimeout bounds one attempt of a SampleJob (and of the short jobs);
	// 0 means 30 minutes. Imports and verification get longTimeout.
	JobTimeout time.Duration
	// RescueAfter is how long a job may stay running before River assumes
	// its worker died and runs it again (every job is idempotent); 0 means
	// JobTimeout + 5 minutes. It must not be below JobTimeout.
	RescueAfter time.Duration
	// Secret opens the stored API keys of endpoints.
	Secret *secret.Box
	Logger *slog.Logger

	// StatsDraws is the bootstrap draws of the statistics job; 0 means 2,000.
	StatsDraws int
	// statsHook, in tests, is called as each statistics job starts.
	statsHook func(context.Context)
	// Lease sets how fast the work of a dead worker is resumed; zero
	// values take the defaults (about a minute).
	Lease LeaseConfig
	// ImportChunkBytes is the chunk size in which an uploaded samples file
	// of plain JSONL of at least two chunks is imported by several jobs
	// (planChunks); 0 means DefaultImportChunkBytes, < 0 never splits.
	ImportChunkBytes int64
	// ImportWriters is how many transactions at once COPY a samples file
	// imported whole (a local file, or an upload not split into parts) of
	// at least 64 MiB; 0 means one per core (GOMAXPROCS), 1 one stream.
	ImportWriters int
	// LocalQueue, when set, is a queue (NewLocalQueue) this client works
	// besides the others, even with Workers = 0: the imports of files on
	// this machine by `reach import` (StartLocalImport).
	LocalQueue string
	// Register, when set, adds workers of packages that build on this one
	// (internal/follow's, which adds checkpoints through intake).
	Register func(*river.Workers)
	// SkipSampling leaves the sampling queue (sampling, and the jobs that
	// ask endpoints: judge, scoring, audit) to other processes: a process
	// without the secret that seals endpoint keys (reach import --wait)
	// would take other comparisons' jobs it cannot do.
	SkipSampling bool
	// SkipSearchIndex leaves the search indexes (SearchIndexArgs) to
	// long-lived processes: a `reach import --wait` exits once its
	// comparison is ready, and an index build it started for an earlier
	// comparison held the samples table's lock that its own import's
	// ANALYZE waited for (minutes), and outlived its stop.
	SkipSearchIndex bool
	// Queues are further queues this client works, with their workers at
	// once, when Workers > 0 (follow.Queue).
	Queues map[string]int
}

// NewClient builds a River client on the store's pool with Reach's workers
// registered. Call Start on it to work jobs.
func NewClient(st *store.Store, cfg Config) (*Client, error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &ImportWorker{st: st})
	split := cfg.ImportChunkBytes
	if split == 0 {
		split = DefaultImportChunkBytes
	}
	writers := cfg.ImportWriters
	if writers == 0 {
		writers = runtime.GOMAXPROCS(0)
	}
	river.AddWorker(workers, &ImportRunWorker{st: st, v: cfg.Verifier, splitAt: max(split, 0), writers: writers})
	river.AddWorker(workers, &ImportChunkWorker{st: st, v: cfg.Verifier})
	river.AddWorker(workers, &ImportLocalWorker{st: st, v: cfg.Verifier, writers: writers})
	river.AddWorker(workers, &VerifyWorker{st: st, v: cfg.Verifier})
	river.AddWorker(workers, &AggregateWorker{st: st})
	river.AddWorker(workers, &ReverifyWorker{st: st, v: cfg.Verifier})
	river.AddWorker(workers, &StatsWorker{st: st, draws: cfg.StatsDraws, hook: cfg.statsHook})
	river.AddWorker(workers, &SampleWorker{st: st, v: cfg.Verifier, box: cfg.Secret, downAfter: cfg.EndpointDownAfter, clients: map[int64]*runClient{}})
	river.AddWorker(workers, &AdaptiveRoundWorker{st: st})
	river.AddWorker(workers, &JudgeWorker{st: st, clients: endpointClients{box: cfg.Secret, downAfter: cfg.EndpointDownAfter}})
	river.AddWorker(workers, &ScoreWorker{st: st, clients: endpointClients{box: cfg.Secret, downAfter: cfg.EndpointDownAfter}})
	river.AddWorker(workers, &AuditWorker{st: st, clients: endpointClients{box: cfg.Secret, downAfter: cfg.EndpointDownAfter}})
	river.AddWorker(workers, &TokenWorker{st: st, clients: endpointClients{box: cfg.Secret, downAfter: cfg.EndpointDownAfter}})
	lease := cfg.Lease.withDefaults()
	river.AddWorker(workers, &ReapWorker{st: st, cfg: lease})
	river.AddWorker(workers, &SearchIndexWorker{st: st})
	if cfg.Register != nil {
		cfg.Register(workers)
	}
	// A finite timeout is what lets River rescue the jobs of a killed worker.
	timeout := cmp.Or(cfg.JobTimeout, 30*time.Minute)
	rc := &river.Config{
		Workers:              workers,
		Logger:               cfg.Logger,
		JobTimeout:           timeout,
		RescueStuckJobsAfter: cmp.Or(cfg.RescueAfter, timeout+5*time.Minute),
		// metricsMiddleware outside the lease, to see a job the reaper took away as cancelled.
		Middleware:   []rivertype.Middleware{metricsMiddleware(), leaseMiddleware(st, lease)},
		ErrorHandler: panicTracer{},
	}
	if cfg.Workers > 0 {
		rc.PeriodicJobs = append(statsPeriodic(), reapPeriodic(lease)...)
		if !cfg.SkipSearchIndex {
			rc.PeriodicJobs = append(rc.PeriodicJobs, searchIndexPeriodic()...)
		}
		sw := cfg.SamplingWorkers
		if sw <= 0 {
			sw = 32
		}
		// Statistics (minutes of CPU on a large comparison) and the
		// reaper that resumes a dead worker's jobs have queues of their own:
		// neither repair nor imports and verification wait behind statistics.
		rc.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers}, SamplingQueue: {MaxWorkers: sw},
			StatsQueue: {MaxWorkers: max(1, cfg.Workers/2)}, RepairQueue: {MaxWorkers: 1},
			SearchIndexQueue: {MaxWorkers: 1}}
		if cfg.SkipSampling {
			delete(rc.Queues, SamplingQueue)
		}
		if cfg.SkipSearchIndex {
			delete(rc.Queues, SearchIndexQueue)
		}
		for q, n := range cfg.Queues {
			rc.Queues[q] = river.QueueConfig{MaxWorkers: max(1, n)}
		}
	}
	if cfg.LocalQueue != "" {
		if rc.Queues == nil {
			rc.Queues = map[string]river.QueueConfig{}
		}
		// Every file of one import at once: each is parsed on its own
		// core while the verifier's goroutines share all of them.
		rc.Queues[cfg.LocalQueue] = river.QueueConfig{MaxWorkers: 16}
	}
	c, err := river.NewClient(riverpgxv5.New(st.Pool()), rc)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return c, nil
}

// StatsQueue is the River queue of statistics jobs (half a process's
// workers, at least one); RepairQueue the reaper's (one worker), so that a
// dead worker's jobs are resumed while statistics run.
const (
	StatsQueue  = "stats"
	RepairQueue = "repair"
)

// longTimeout bounds an import or a verification, which on a file of
// millions of samples can take far longer than one sampling request.
const longTimeout = 3 * time.Hour

// enqueue inserts jobs in the transaction tx belongs to, so that they exist
// exactly when the work that produced them is committed.
func enqueue(ctx context.Context, tx *store.Store, args ...river.JobArgs) error {
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("river client: %w", err)
	}
	params := make([]river.InsertManyParams, len(args))
	for i, a := range args {
		params[i] = river.InsertManyParams{Args: a}
	}
	if _, err := client.InsertManyTx(ctx, tx.Tx(), params); err != nil {
		return fmt.Errorf("enqueue jobs: %w", err)
	}
	return nil
}

// StartImport enqueues the import of a comparison created with
// store.CreateComparison, inside tx.
func StartImport(ctx context.Context, client *Client, tx *store.Store, comparisonID int64) error {
	if _, err := client.InsertTx(ctx, tx.Tx(), ImportArgs{ComparisonID: comparisonID}, nil); err != nil {
		return fmt.Errorf("enqueue import of comparison %d: %w", comparisonID, err)
	}
	return nil
}

// panicTracer logs the stack of a job's panic: River's own log names the
// value only. River retries the job as for an error.
type panicTracer struct{}

func (panicTracer) HandleError(context.Context, *rivertype.JobRow, error) *river.ErrorHandlerResult {
	return nil
}

func (panicTracer) HandlePanic(_ context.Context, job *rivertype.JobRow, panicVal any, trace string) *river.ErrorHandlerResult {
	slog.Error("job panicked", "job_id", job.ID, "kind", job.Kind, "attempt", job.Attempt, "panic", fmt.Sprint(panicVal), "trace", trace)
	return nil
}

package jobs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reach-lab/reach/internal/store"
)

// Leases are how Reach notices a dead worker within a minute, whatever the
// job: River alone rescues a running job only after its timeout (hours for
// a large import, half an hour for a sampling request). Every job that runs
// longer than LeaseConfig.Delay takes a lease and renews it; the reaper, a
// periodic job, ends a job whose lease went stale (River's row becomes
// cancelled, as River's own rescuer would make it hours later) and hands its
// work to a new job. Every job is idempotent, so the new job redoes or
// finishes exactly what is missing.
//
// With the defaults a killed worker's work is running again after at most
// Delay + TTL + ReapEvery ≈ 65 s.
type LeaseConfig struct {
	// Delay: jobs shorter than this never write a lease (most jobs).
	Delay time.Duration
	// Renew: how often a running job renews its lease.
	Renew time.Duration
	// TTL: a lease not renewed for this long belongs to a dead worker.
	TTL time.Duration
	// ReapEvery: how often the reaper looks for stale leases.
	ReapEvery time.Duration
	// StuckAfter: how long a comparison may sit in a working state with no
	// job on it before the reaper repairs it (a status is set a moment
	// before the job that moves it on is enqueued, sometimes in another
	// transaction).
	StuckAfter time.Duration
}

func (c LeaseConfig) withDefaults() LeaseConfig {
	c.Delay = cmp.Or(c.Delay, 5*time.Second)
	c.Renew = cmp.Or(c.Renew, 10*time.Second)
	c.TTL = cmp.Or(c.TTL, 45*time.Second)
	c.ReapEvery = cmp.Or(c.ReapEvery, 15*time.Second)
	c.StuckAfter = cmp.Or(c.StuckAfter, 2*time.Minute)
	return c
}

// errLeaseLost cancels a job whose lease the reaper took away.
var errLeaseLost = errors.New("lease lost: the reaper gave this job's work to another job")

var holderName = func() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s:%d", h, os.Getpid())
}()

// leaseMiddleware wraps every job's work with its lease.
func leaseMiddleware(st *store.Store, cfg LeaseConfig) rivertype.WorkerMiddleware {
	return river.WorkerMiddlewareFunc(func(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		done := make(chan struct{})
		var wg sync.WaitGroup
		held := false
		wg.Go(func() {
			t := time.NewTimer(cfg.Delay)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
				}
				if !held {
					if err := st.TakeLease(ctx, job.ID, job.Kind, holderName); err == nil {
						held = true
					}
				} else if ok, err := st.RenewLease(ctx, job.ID); err == nil && !ok {
					slog.Warn("job lost its lease; stopping it", "job", job.ID, "kind", job.Kind)
					cancel(errLeaseLost)
					return
				}
				t.Reset(cfg.Renew)
			}
		})
		err := doInner(ctx)
		close(done)
		wg.Wait()
		if held {
			if derr := st.DropLease(context.WithoutCancel(ctx), job.ID); derr != nil {
				slog.Warn("drop lease", "job", job.ID, "err", derr)
			}
		}
		if errors.Is(context.Cause(ctx), errLeaseLost) {
			return river.JobCancel(errLeaseLost) // the new job does the work
		}
		return err
	})
}

// ReapArgs is the periodic reaper: it re-enqueues the work of jobs whose
// worker died and repairs comparisons left in a state no job will finish.
type ReapArgs struct{}

// Kind implements river.JobArgs.
func (ReapArgs) Kind() string { return "reap" }

// InsertOpts: one attempt; reapPeriodic makes it one per period.
func (ReapArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: RepairQueue, MaxAttempts: 1}
}

// ReapWorker works ReapArgs.
type ReapWorker struct {
	river.WorkerDefaults[ReapArgs]
	st  *store.Store
	cfg LeaseConfig
}

// rawArgs re-inserts a job's stored arguments under its kind.
type rawArgs struct {
	kind string
	args json.RawMessage
}

func (a rawArgs) Kind() string                 { return a.kind }
func (a rawArgs) MarshalJSON() ([]byte, error) { return a.args, nil }

// jobTargets is what the progress page needs to know about a job's args.
type jobTargets struct {
	ComparisonID int64 `json:"comparison_id"`
	RunID        int64 `json:"run_id"`
}

// Work hands each lost job's work to a new job.
func (w *ReapWorker) Work(ctx context.Context, job *river.Job[ReapArgs]) error {
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return err
	}
	lost, err := w.st.LostJobs(ctx, w.cfg.Delay+w.cfg.TTL, w.cfg.TTL)
	if err != nil {
		return err
	}
	for _, j := range lost {
		if err := w.resume(ctx, client, j); err != nil {
			slog.Error("resume lost job", "job", j.ID, "kind", j.Kind, "err", err)
		}
	}
	return repairStuck(ctx, w.st, w.cfg.StuckAfter)
}

func (w *ReapWorker) resume(ctx context.Context, client *Client, j store.LostJob) error {
	var a ImportLocalArgs // ImportChunkArgs of a local file have the same fields
	_ = json.Unmarshal(j.Args, &a)
	if j.Kind == (ImportLocalArgs{}).Kind() || (j.Kind == (ImportChunkArgs{}).Kind() && a.Path != "") {
		// The file is on the lost process's disk: no other worker can
		// read it, so the comparison fails and says why.
		ended, err := w.st.EndLostJob(ctx, j.ID, "the reach import process was lost")
		if err != nil {
			return err
		}
		if err := w.st.DropLease(ctx, j.ID); err != nil {
			return err
		}
		if !ended {
			return nil // finished meanwhile, or another reaper failed it
		}
		failImport(ctx, w.st, a.ComparisonID, a.RunID, fmt.Errorf("the `reach import` process reading %s (%s) stopped before the import finished; nothing of it was kept: run the import again",
			a.Path, cmp.Or(j.Holder, a.Holder)), true)
		slog.Warn("failed the import of a lost reach import process", "job", j.ID, "holder", j.Holder, "comparison", a.ComparisonID)
		return nil
	}
	return w.st.WithTx(ctx, func(tx *store.Store) error {
		holder := cmp.Or(j.Holder, "a worker")
		lost := fmt.Sprintf("worker lost (%s stopped at %s)", holder, time.Now().UTC().Format("15:04:05 UTC"))
		ended, err := tx.EndLostJob(ctx, j.ID, lost)
		if err != nil {
			return err
		}
		if err := tx.DropLease(ctx, j.ID); err != nil {
			return err
		}
		if !ended || j.CancelAsked || j.Kind == (ReapArgs{}).Kind() {
			// Finished meanwhile, or resumed by another reaper; or its
			// work was cancelled; or a reaper, which the next period redoes.
			return nil
		}
		opts := &river.InsertOpts{Queue: j.Queue, MaxAttempts: j.MaxAttempts, Priority: j.Priority}
		if j.Unique {
			// Every unique job of Reach is unique by its arguments while
			// unfinished: so is its successor (a duplicate enqueued in the
			// meantime does the work instead).
			opts.UniqueOpts = river.UniqueOpts{ByArgs: true, ByState: unfinished}
		}
		res, err := client.InsertManyTx(ctx, tx.Tx(), []river.InsertManyParams{{Args: rawArgs{kind: j.Kind, args: j.Args}, InsertOpts: opts}})
		if err != nil {
			return fmt.Errorf("re-enqueue lost job %d: %w", j.ID, err)
		}
		var t jobTargets
		_ = json.Unmarshal(j.Args, &t)
		if t.ComparisonID != 0 || t.RunID != 0 {
			if err := tx.NoteWorkerLost(ctx, t.ComparisonID, t.RunID, lost+"; resuming"); err != nil {
				return err
			}
		}
		slog.Warn("resumed the work of a lost job", "job", j.ID, "kind", j.Kind, "holder", j.Holder, "new_job", res[0].Job.ID)
		return nil
	})
}

// reapPeriodic runs the reaper on the elected leader among the worker
// processes.
func reapPeriodic(cfg LeaseConfig) []*river.PeriodicJob {
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(cfg.ReapEvery),
		// Unique per period (River's shortest is a second), not while
		// running: a reaper killed with its worker stays "running" in River
		// until its timeout, and must not keep the next ones from being
		// enqueued. Two reapers may overlap; EndLostJob lets only one
		// resume each lost job.
		func() (river.JobArgs, *river.InsertOpts) {
			return ReapArgs{}, &river.InsertOpts{Queue: RepairQueue, MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByPeriod: max(cfg.ReapEvery, time.Second)}}
		},
		&river.PeriodicJobOpts{RunOnStart: true})}
}

package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// TakeLease records that holder is working River job jobID (kind) now.
func (s *Store) TakeLease(ctx context.Context, jobID int64, kind, holder string) error {
	_, err := s.db.Exec(ctx, `INSERT INTO job_leases (job_id, kind, holder) VALUES ($1, $2, $3)
		ON CONFLICT (job_id) DO UPDATE SET holder = EXCLUDED.holder, renewed_at = now()`, jobID, kind, holder)
	if err != nil {
		return fmt.Errorf("take lease of job %d: %w", jobID, err)
	}
	return nil
}

// RenewLease extends a lease. It reports false when the lease is gone: the
// reaper judged the holder dead and gave the work to another job.
func (s *Store) RenewLease(ctx context.Context, jobID int64) (bool, error) {
	tag, err := s.db.Exec(ctx, `UPDATE job_leases SET renewed_at = now() WHERE job_id = $1`, jobID)
	if err != nil {
		return false, fmt.Errorf("renew lease of job %d: %w", jobID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// DropLease removes a finished job's lease.
func (s *Store) DropLease(ctx context.Context, jobID int64) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM job_leases WHERE job_id = $1`, jobID); err != nil {
		return fmt.Errorf("drop lease of job %d: %w", jobID, err)
	}
	return nil
}

// LostJob is a River job that is running according to River but whose
// worker stopped renewing its lease.
type LostJob struct {
	ID          int64
	Kind        string
	Queue       string
	Args        []byte
	MaxAttempts int
	Priority    int
	Holder      string // "" when it never took a lease
	AttemptedAt time.Time
	// Unique: it was inserted with unique options (by its arguments), so
	// while River holds it as running no job with the same arguments can
	// be enqueued.
	Unique bool
	// CancelAsked: someone asked River to cancel it (a pause, say); its
	// work is not to be resumed.
	CancelAsked bool
}

// LostJobs returns running River jobs whose lease is older than ttl, or
// which have run longer than grace without taking one: their worker is
// gone. Jobs someone asked to cancel are among them (CancelAsked): a dead
// worker never acknowledges the cancel.
func (s *Store) LostJobs(ctx context.Context, grace, ttl time.Duration) ([]LostJob, error) {
	rows, err := s.db.Query(ctx, `SELECT j.id, j.kind, j.queue, j.args, j.max_attempts, j.priority, COALESCE(l.holder, ''), j.attempted_at,
			j.unique_key IS NOT NULL, j.metadata ? 'cancel_attempted_at'
		FROM river_job j LEFT JOIN job_leases l ON l.job_id = j.id
		WHERE j.state = 'running'
			AND j.attempted_at < now() - $1::interval
			AND (l.job_id IS NULL OR l.renewed_at < now() - $2::interval)
		ORDER BY j.id LIMIT 1000`, grace, ttl)
	if err != nil {
		return nil, fmt.Errorf("lost jobs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (LostJob, error) {
		var j LostJob
		err := row.Scan(&j.ID, &j.Kind, &j.Queue, &j.Args, &j.MaxAttempts, &j.Priority, &j.Holder, &j.AttemptedAt, &j.Unique, &j.CancelAsked)
		return j, err
	})
	if err != nil {
		return nil, fmt.Errorf("lost jobs: %w", err)
	}
	return out, nil
}

// EndLostJob finalizes River job jobID, found by LostJobs, as cancelled
// with reason in its errors, as River's own rescuer does with a stuck job
// (only after the job's timeout, hours for an import). Until then the row
// would stay "running": it would keep the unique key of its arguments, so
// the next enqueue of the same work (a second re-verification, a Retry, a
// Resume) would be dropped as a duplicate, and it would count as a job
// still working on its comparison. It reports false when the job is no
// longer running (it finished, or another reaper ended it first): then
// nothing is to be resumed. A worker that was only slow, not dead, finds
// its lease gone and stops; River does not record its outcome over the
// cancelled state.
func (s *Store) EndLostJob(ctx context.Context, jobID int64, reason string) (bool, error) {
	tag, err := s.db.Exec(ctx, `UPDATE river_job SET state = 'cancelled', finalized_at = now(),
			errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt, 'error', $2::text, 'trace', ''))
		WHERE id = $1 AND state = 'running'`, jobID, reason)
	if err != nil {
		return false, fmt.Errorf("end lost job %d: %w", jobID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// NoteWorkerLost marks the running progress rows of a run (or, with runID
// 0, of every run of the comparison) as resumed after a lost worker, so the
// progress page says so instead of showing a bar that no longer moves.
func (s *Store) NoteWorkerLost(ctx context.Context, comparisonID, runID int64, note string) error {
	_, err := s.db.Exec(ctx, `UPDATE run_progress p SET detail = $3, updated_at = now()
		FROM runs r WHERE r.id = p.run_id AND p.status IN ('running', 'queued')
			AND (($2 <> 0 AND r.id = $2) OR ($2 = 0 AND r.comparison_id = $1))`, comparisonID, runID, note)
	if err != nil {
		return fmt.Errorf("note lost worker: %w", err)
	}
	return nil
}

// StuckComparisons returns comparisons in a working state (importing,
// verifying, sampling) that have not changed for grace and have no
// unfinished River job working on them: no job will ever move them on.
func (s *Store) StuckComparisons(ctx context.Context, grace time.Duration) ([]int64, error) {
	rows, err := s.db.Query(ctx, `SELECT c.id FROM comparisons c
		WHERE c.status IN ('pending', 'importing', 'verifying', 'sampling') AND c.updated_at < now() - $1::interval
			AND NOT EXISTS (SELECT 1 FROM river_job j
				WHERE j.state IN ('available', 'pending', 'running', 'retryable', 'scheduled')
					AND j.args ? 'comparison_id' AND (j.args->>'comparison_id')::bigint = c.id)
		ORDER BY c.id LIMIT 100`, grace)
	if err != nil {
		return nil, fmt.Errorf("stuck comparisons: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("stuck comparisons: %w", err)
	}
	return ids, nil
}

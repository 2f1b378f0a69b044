package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// JobCount is how many River jobs of one kind sit in one queue and state,
// and how long the oldest of them has been due (seconds; 0 when none is).
type JobCount struct {
	Kind, Queue, State string
	Count              int64
	OldestSeconds      float64
}

// UnfinishedJobs counts River's jobs that have not ended (available,
// scheduled, retryable, running, pending) by kind, queue and state. It
// reads those states only: River's index by state keeps the query short
// however many finished jobs River still holds.
func (s *Store) UnfinishedJobs(ctx context.Context) ([]JobCount, error) {
	rows, err := s.db.Query(ctx, `SELECT kind, queue, state::text, count(*),
			GREATEST(EXTRACT(EPOCH FROM now() - min(scheduled_at)), 0)::float8
		FROM river_job
		WHERE state IN ('available', 'scheduled', 'retryable', 'running', 'pending')
		GROUP BY kind, queue, state`)
	if err != nil {
		return nil, fmt.Errorf("count unfinished jobs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (JobCount, error) {
		var j JobCount
		err := row.Scan(&j.Kind, &j.Queue, &j.State, &j.Count, &j.OldestSeconds)
		return j, err
	})
	if err != nil {
		return nil, fmt.Errorf("count unfinished jobs: %w", err)
	}
	return out, nil
}

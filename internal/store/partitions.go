package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// samples is partitioned by run (migration 00182): a run inserted since has
// its own partition, SamplePartition(run), made by a trigger on runs; the
// runs that existed at the migration share samples_legacy.
// DeleteComparison and ClearRun (outside a transaction) empty a run's
// partition with a TRUNCATE in a transaction of its own: inside a larger
// one, ACCESS EXCLUSIVE on several partitions deadlocks with a reader that
// locks every partition. A run deleted otherwise has its samples deleted
// row by row (a trigger). DropOrphanSamplePartitions drops the partitions
// of deleted runs later.

const (
	samplePartitionPrefix = "samples_run_"
	legacySamples         = "samples_legacy"
)

// SamplePartition is the name of run runID's own partition of samples.
func SamplePartition(runID int64) string {
	return samplePartitionPrefix + strconv.FormatInt(runID, 10)
}

// ownPartition reports whether run runID has its own partition (false: its
// samples are in samples_legacy, among other runs').
func (s *Store) ownPartition(ctx context.Context, runID int64) (bool, error) {
	var own bool
	if err := s.db.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, SamplePartition(runID)).Scan(&own); err != nil {
		return false, fmt.Errorf("partition of run %d: %w", runID, err)
	}
	return own, nil
}

// dropPartitionLockTimeout bounds how long DropOrphanSamplePartitions waits
// for ACCESS EXCLUSIVE on samples per partition: while it waits, every
// new query on samples queues behind it. A partition it could not drop
// (a long query on samples) is dropped by a later call.
const dropPartitionLockTimeout = "300ms"

// DropOrphanSamplePartitions drops the partitions of samples whose run is
// gone (emptied by the run's delete) and returns how many it dropped. Each
// drop is its own transaction, on the pool; one that waits longer than
// dropPartitionLockTimeout for the table's lock is left for the next call.
func (s *Store) DropOrphanSamplePartitions(ctx context.Context) (int, error) {
	if s.tx != nil {
		return 0, errors.New("drop sample partitions: not in a transaction")
	}
	rows, err := s.pool.Query(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'samples'::regclass AND c.relname LIKE 'samples\_run\_%'
		  AND NOT EXISTS (SELECT 1 FROM runs r WHERE 'samples_run_' || r.id = c.relname)`)
	if err != nil {
		return 0, fmt.Errorf("orphan sample partitions: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("orphan sample partitions: %w", err)
	}
	dropped := 0
	for _, n := range names {
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '`+dropPartitionLockTimeout+`'`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `DROP TABLE IF EXISTS `+pgx.Identifier{n}.Sanitize())
			return err
		})
		var pgErr *pgconn.PgError
		switch {
		case errors.As(err, &pgErr) && pgErr.Code == "55P03": // lock_not_available
			continue
		case err != nil:
			return dropped, fmt.Errorf("drop sample partition %s: %w", n, err)
		}
		dropped++
	}
	return dropped, nil
}

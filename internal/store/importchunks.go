package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
)

// ImportChunk is one part of a samples file imported by its own job: the
// bytes [Start, End) of the run's upload, which begin at a line, and the
// reader's state there (State: JSON the import job wrote and reads back).
type ImportChunk struct {
	RunID      int64
	Chunk      int
	Start, End int64
	State      json.RawMessage
	Done       bool
}

// ChunkTally is what one chunk's import stored, or (summed) all of a run's.
type ChunkTally struct {
	Samples, Verified, Pending, Changed int64
	FileLabel                           bool
}

// SaveImportChunks replaces a run's chunks with cs.
func (s *Store) SaveImportChunks(ctx context.Context, runID int64, cs []ImportChunk) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM import_chunks WHERE run_id = $1`, runID); err != nil {
		return fmt.Errorf("clear import chunks of run %d: %w", runID, err)
	}
	rows := make([][]any, len(cs))
	for i, c := range cs {
		rows[i] = []any{runID, c.Chunk, c.Start, c.End, string(c.State)}
	}
	_, err := s.db.CopyFrom(ctx, pgx.Identifier{"import_chunks"}, []string{"run_id", "chunk", "start_offset", "end_offset", "state"}, pgx.CopyFromRows(rows))
	if err != nil {
		return fmt.Errorf("save import chunks of run %d: %w", runID, err)
	}
	return nil
}

// LockImportChunk takes, for the rest of the transaction, the lock that
// one import of chunk no of a run holds: a second job on the same chunk
// (a duplicate, or a resumed job whose lost predecessor is still rolling
// back) waits until the first commits, then finds the chunk done.
func (s *Store) LockImportChunk(ctx context.Context, runID int64, no int) error {
	// The two-key form: its keys do not overlap the one-key locks' (dataset hashes).
	if _, err := s.db.Exec(ctx, `SELECT pg_advisory_xact_lock($1::int, $2::int)`, int32(runID&0x7fffffff), int32(no)); err != nil {
		return fmt.Errorf("lock import chunk %d of run %d: %w", no, runID, err)
	}
	return nil
}

// GetImportChunk returns chunk no of a run's import; ErrNotFound when the
// run has no such chunk (its import failed or started over meanwhile).
func (s *Store) GetImportChunk(ctx context.Context, runID int64, no int) (ImportChunk, error) {
	c := ImportChunk{RunID: runID, Chunk: no}
	err := s.db.QueryRow(ctx, `SELECT start_offset, end_offset, state, done FROM import_chunks WHERE run_id = $1 AND chunk = $2`, runID, no).
		Scan(&c.Start, &c.End, &c.State, &c.Done)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, fmt.Errorf("import chunk %d of run %d: %w", no, runID, ErrNotFound)
	}
	if err != nil {
		return c, fmt.Errorf("import chunk %d of run %d: %w", no, runID, err)
	}
	return c, nil
}

// OpenImportChunks returns the numbers of a run's import chunks not done yet.
func (s *Store) OpenImportChunks(ctx context.Context, runID int64) ([]int, error) {
	rows, err := s.db.Query(ctx, `SELECT chunk FROM import_chunks WHERE run_id = $1 AND NOT done ORDER BY chunk`, runID)
	if err != nil {
		return nil, fmt.Errorf("open import chunks of run %d: %w", runID, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("open import chunks of run %d: %w", runID, err)
	}
	return out, nil
}

// ImportChunksRead records how far chunk no has read (bytes from its
// start, samples stored so far) and returns the run's totals: bytes read
// and samples stored by all its chunks, chunks done and chunks in all.
func (s *Store) ImportChunksRead(ctx context.Context, runID int64, no int, read, samples int64) (bytes, stored int64, done, total int, err error) {
	if _, err = s.db.Exec(ctx, `UPDATE import_chunks SET bytes_read = $3, samples = $4 WHERE run_id = $1 AND chunk = $2 AND NOT done`,
		runID, no, read, samples); err != nil {
		return 0, 0, 0, 0, fmt.Errorf("record import chunk %d of run %d: %w", no, runID, err)
	}
	err = s.db.QueryRow(ctx, `SELECT coalesce(sum(CASE WHEN done THEN end_offset - start_offset ELSE bytes_read END), 0)::bigint,
			coalesce(sum(samples), 0)::bigint, count(*) FILTER (WHERE done), count(*)
		FROM import_chunks WHERE run_id = $1`, runID).Scan(&bytes, &stored, &done, &total)
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("import chunks of run %d: %w", runID, err)
	}
	return bytes, stored, done, total, nil
}

// FinishImportChunk marks chunk no of a run done with what it stored and
// returns how many of the run's chunks are not done yet and the sum of
// what all its chunks stored. Call it in the chunk's transaction, after
// locking the comparison: the chunks of a comparison then finish one at a
// time, and exactly one sees none left.
func (s *Store) FinishImportChunk(ctx context.Context, runID int64, no int, t ChunkTally) (left int, sum ChunkTally, err error) {
	tag, err := s.db.Exec(ctx, `UPDATE import_chunks SET done = true, bytes_read = end_offset - start_offset, samples = $3, verified = $4,
			pending = $5, changed = $6, file_label = $7 WHERE run_id = $1 AND chunk = $2 AND NOT done`,
		runID, no, t.Samples, t.Verified, t.Pending, t.Changed, t.FileLabel)
	if err != nil {
		return 0, sum, fmt.Errorf("finish import chunk %d of run %d: %w", no, runID, err)
	}
	if tag.RowsAffected() != 1 {
		return 0, sum, fmt.Errorf("import chunk %d of run %d is done already or gone: %w", no, runID, ErrNotFound)
	}
	err = s.db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE NOT done), coalesce(sum(samples), 0)::bigint, coalesce(sum(verified), 0)::bigint,
			coalesce(sum(pending), 0)::bigint, coalesce(sum(changed), 0)::bigint, coalesce(bool_or(file_label), false)
		FROM import_chunks WHERE run_id = $1`, runID).Scan(&left, &sum.Samples, &sum.Verified, &sum.Pending, &sum.Changed, &sum.FileLabel)
	if err != nil {
		return 0, sum, fmt.Errorf("import chunks of run %d: %w", runID, err)
	}
	return left, sum, nil
}

// OpenUploadAt returns a reader over an upload's bytes from byte offset
// on (chunks before it are not read).
func (s *Store) OpenUploadAt(ctx context.Context, id, offset int64) (io.Reader, error) {
	u := &uploadReader{ctx: ctx, s: s, id: id, seq: int(offset / ChunkSize)}
	if skip := offset % ChunkSize; skip > 0 {
		if _, err := io.CopyN(io.Discard, u, skip); err != nil {
			if err == io.EOF {
				return nil, fmt.Errorf("upload %d is shorter than %d bytes", id, offset)
			}
			return nil, err
		}
	}
	return u, nil
}

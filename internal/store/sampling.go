package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Chunk is one SampleJob's share of a run: sample indices
// [First, First+Count) on one problem.
type Chunk struct {
	RunID     int64
	ProblemID int64
	First     int
	Count     int
	Status    string // pending | done | failed
	Error     string
}

// EnsureChunks creates the chunks covering sample indices [0, n) of every
// given problem, chunkSize indices each, keeping the chunks that exist (so
// raising n only adds the missing ones). It returns the run's pending chunks.
func (s *Store) EnsureChunks(ctx context.Context, runID int64, problemIDs []int64, n, chunkSize int) ([]Chunk, error) {
	if chunkSize < 1 || n < 1 {
		return nil, fmt.Errorf("chunks of run %d: n = %d, chunk size = %d", runID, n, chunkSize)
	}
	var firsts, counts []int32
	var pids []int64
	for _, pid := range problemIDs {
		for first := 0; first < n; first += chunkSize {
			pids = append(pids, pid)
			firsts = append(firsts, int32(first))
			counts = append(counts, int32(min(chunkSize, n-first)))
		}
	}
	// A chunk that ends beyond the new n (after lowering n) is left as it is.
	_, err := s.db.Exec(ctx, `INSERT INTO sample_chunks (run_id, problem_id, first_index, count)
		SELECT $1, * FROM unnest($2::bigint[], $3::int[], $4::int[])
		ON CONFLICT (run_id, problem_id, first_index) DO UPDATE SET
			count = GREATEST(sample_chunks.count, EXCLUDED.count),
			status = CASE WHEN EXCLUDED.count > sample_chunks.count THEN 'pending' ELSE sample_chunks.status END`,
		runID, pids, firsts, counts)
	if err != nil {
		return nil, fmt.Errorf("create chunks of run %d: %w", runID, err)
	}
	return s.PendingChunks(ctx, runID)
}

// PendingChunks returns a run's chunks still to sample.
func (s *Store) PendingChunks(ctx context.Context, runID int64) ([]Chunk, error) {
	rows, err := s.db.Query(ctx, `SELECT run_id, problem_id, first_index, count, status, error FROM sample_chunks
		WHERE run_id = $1 AND status = 'pending' ORDER BY problem_id, first_index`, runID)
	if err != nil {
		return nil, fmt.Errorf("pending chunks of run %d: %w", runID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Chunk, error) {
		var c Chunk
		err := row.Scan(&c.RunID, &c.ProblemID, &c.First, &c.Count, &c.Status, &c.Error)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("pending chunks of run %d: %w", runID, err)
	}
	return out, nil
}

// FinishChunk records a chunk's outcome.
func (s *Store) FinishChunk(ctx context.Context, c Chunk, status, errText, kind string) error {
	_, err := s.db.Exec(ctx, `UPDATE sample_chunks SET status = $4, error = $5, error_kind = $6, updated_at = now()
		WHERE run_id = $1 AND problem_id = $2 AND first_index = $3`, c.RunID, c.ProblemID, c.First, status, errText, kind)
	if err != nil {
		return fmt.Errorf("finish chunk of run %d: %w", c.RunID, err)
	}
	return nil
}

// NoteChunkRetry records on a pending chunk why its request is being
// retried (the progress page shows it); the chunk stays pending.
func (s *Store) NoteChunkRetry(ctx context.Context, c Chunk, errText, kind string) error {
	_, err := s.db.Exec(ctx, `UPDATE sample_chunks SET error = $4, error_kind = $5, updated_at = now()
		WHERE run_id = $1 AND problem_id = $2 AND first_index = $3 AND status = 'pending'`, c.RunID, c.ProblemID, c.First, errText, kind)
	if err != nil {
		return fmt.Errorf("note retry of a chunk of run %d: %w", c.RunID, err)
	}
	return nil
}

// ReopenFailedChunks makes the chunks of a comparison that failed for
// good pending again (Retry), leaving those the user cancelled, and
// returns how many chunks are pending now.
func (s *Store) ReopenFailedChunks(ctx context.Context, comparisonID int64) (int64, error) {
	_, err := s.db.Exec(ctx, `UPDATE sample_chunks SET status = 'pending', error = '', error_kind = '', updated_at = now()
		WHERE status = 'failed' AND error_kind <> 'cancelled' AND run_id IN (SELECT id FROM runs WHERE comparison_id = $1)`, comparisonID)
	if err != nil {
		return 0, fmt.Errorf("reopen chunks of comparison %d: %w", comparisonID, err)
	}
	var n int64
	err = s.db.QueryRow(ctx, `SELECT count(*) FROM sample_chunks WHERE status = 'pending'
		AND run_id IN (SELECT id FROM runs WHERE comparison_id = $1)`, comparisonID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("open chunks of comparison %d: %w", comparisonID, err)
	}
	return n, nil
}

// LastChunkError returns the error of a run's chunk that failed last ("" when none did).
func (s *Store) LastChunkError(ctx context.Context, runID int64) (string, error) {
	var e string
	err := s.db.QueryRow(ctx, `SELECT COALESCE((SELECT error FROM sample_chunks WHERE run_id = $1 AND error <> ''
		ORDER BY status = 'failed' DESC, updated_at DESC LIMIT 1), '')`, runID).Scan(&e)
	if err != nil {
		return "", fmt.Errorf("last chunk error of run %d: %w", runID, err)
	}
	return e, nil
}

// FailPendingChunks marks every pending chunk of a comparison failed (on
// cancel) and returns how many there were.
func (s *Store) FailPendingChunks(ctx context.Context, comparisonID int64, reason string) (int64, error) {
	tag, err := s.db.Exec(ctx, `UPDATE sample_chunks SET status = 'failed', error = $2, error_kind = 'cancelled', updated_at = now()
		WHERE status = 'pending' AND run_id IN (SELECT id FROM runs WHERE comparison_id = $1)`, comparisonID, reason)
	if err != nil {
		return 0, fmt.Errorf("cancel chunks of comparison %d: %w", comparisonID, err)
	}
	return tag.RowsAffected(), nil
}

// OpenChunks counts a run's pending chunks.
func (s *Store) OpenChunks(ctx context.Context, runID int64) (int, error) {
	var n int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM sample_chunks WHERE run_id = $1 AND status = 'pending'`, runID).Scan(&n); err != nil {
		return 0, fmt.Errorf("open chunks of run %d: %w", runID, err)
	}
	return n, nil
}

// ExistingIndices returns which sample indices in [from, to) a run already
// has on a problem.
func (s *Store) ExistingIndices(ctx context.Context, runID, problemID int64, from, to int) (map[int]bool, error) {
	rows, err := s.db.Query(ctx, `SELECT sample_index FROM samples WHERE run_id = $1 AND problem_id = $2
		AND sample_index >= $3 AND sample_index < $4`, runID, problemID, from, to)
	if err != nil {
		return nil, fmt.Errorf("existing samples of run %d: %w", runID, err)
	}
	idx, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("existing samples of run %d: %w", runID, err)
	}
	out := make(map[int]bool, len(idx))
	for _, i := range idx {
		out[i] = true
	}
	return out, nil
}

// AddSamples inserts sampled completions, skipping any (run, problem, index)
// that already exists: a retried SampleJob never duplicates a sample.
func (s *Store) AddSamples(ctx context.Context, batch []Sample) (int64, error) {
	b := &pgx.Batch{}
	for _, x := range batch {
		b.Queue(`INSERT INTO samples (run_id, problem_id, sample_index, completion, finish_reason, completion_tokens,
				status, extracted, rule, reason, verdict_source, detail, seed)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT DO NOTHING`,
			x.RunID, x.ProblemID, x.SampleIndex, x.Completion, x.FinishReason, x.CompletionTokens,
			x.Status, x.Extracted, x.Rule, x.Reason, x.VerdictSource, x.Detail, x.Seed)
	}
	res := s.db.SendBatch(ctx, b)
	defer res.Close()
	var n int64
	for range batch {
		tag, err := res.Exec()
		if err != nil {
			return n, fmt.Errorf("store sampled completions: %w", err)
		}
		n += tag.RowsAffected()
	}
	return n, nil
}

// AddRunUsage adds tokens, requests and failed attempts by kind to a run.
func (s *Store) AddRunUsage(ctx context.Context, runID, tokensIn, tokensOut, requests int64, errs map[string]int64) error {
	e, err := json.Marshal(errs)
	if err != nil {
		return err
	}
	_, err = s.db.Exec(ctx, `UPDATE runs SET tokens_in = tokens_in + $2, tokens_out = tokens_out + $3, requests = requests + $4,
			errors = (SELECT COALESCE(jsonb_object_agg(k, COALESCE((runs.errors->>k)::bigint, 0) + COALESCE((d->>k)::bigint, 0)), '{}')
				FROM (SELECT $5::jsonb AS d) x, LATERAL (SELECT jsonb_object_keys(runs.errors) UNION SELECT jsonb_object_keys($5::jsonb)) AS keys(k))
		WHERE id = $1`, runID, tokensIn, tokensOut, requests, string(e))
	if err != nil {
		return fmt.Errorf("add usage of run %d: %w", runID, err)
	}
	return nil
}

// StartRunSampling marks a run as sampling (once: the start time is kept).
func (s *Store) StartRunSampling(ctx context.Context, runID int64) error {
	_, err := s.db.Exec(ctx, `UPDATE runs SET status = 'sampling', error = '', sampling_started_at = COALESCE(sampling_started_at, now()) WHERE id = $1`, runID)
	if err != nil {
		return fmt.Errorf("start sampling run %d: %w", runID, err)
	}
	return nil
}

// SetSamplingConfig replaces a comparison's sampling config.
func (s *Store) SetSamplingConfig(ctx context.Context, id int64, cfg any) error {
	b, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	if _, err := s.db.Exec(ctx, `UPDATE comparisons SET sampling = $2 WHERE id = $1`, id, b); err != nil {
		return fmt.Errorf("set sampling config of comparison %d: %w", id, err)
	}
	return nil
}

// SamplingProgress is one run's sampling state for the progress page.
type SamplingProgress struct {
	RunID         int64
	Samples       int64 // stored so far
	Target        int64 // samples the chunks ask for
	ChunksPending int64
	ChunksFailed  int64
	LastError     string
	// Retrying is why a pending chunk's request is being retried (the
	// latest such note; see NoteChunkRetry), "" when none is.
	Retrying string
}

// SamplingProgressFor returns the sampling state of every run of a comparison.
func (s *Store) SamplingProgressFor(ctx context.Context, comparisonID int64) (map[int64]SamplingProgress, error) {
	rows, err := s.db.Query(ctx, `SELECT r.id,
			(SELECT count(*) FROM samples x WHERE x.run_id = r.id),
			COALESCE((SELECT sum(count) FROM sample_chunks c WHERE c.run_id = r.id), 0),
			(SELECT count(*) FROM sample_chunks c WHERE c.run_id = r.id AND c.status = 'pending'),
			(SELECT count(*) FROM sample_chunks c WHERE c.run_id = r.id AND c.status = 'failed'),
			COALESCE((SELECT error FROM sample_chunks c WHERE c.run_id = r.id AND c.status = 'failed' ORDER BY updated_at DESC LIMIT 1), ''),
			COALESCE((SELECT error FROM sample_chunks c WHERE c.run_id = r.id AND c.status = 'pending' AND c.error <> '' ORDER BY updated_at DESC LIMIT 1), '')
		FROM runs r WHERE r.comparison_id = $1 AND r.endpoint_url <> ''`, comparisonID)
	if err != nil {
		return nil, fmt.Errorf("sampling progress of comparison %d: %w", comparisonID, err)
	}
	defer rows.Close()
	out := map[int64]SamplingProgress{}
	for rows.Next() {
		var p SamplingProgress
		if err := rows.Scan(&p.RunID, &p.Samples, &p.Target, &p.ChunksPending, &p.ChunksFailed, &p.LastError, &p.Retrying); err != nil {
			return nil, fmt.Errorf("sampling progress of comparison %d: %w", comparisonID, err)
		}
		out[p.RunID] = p
	}
	return out, rows.Err()
}

// ActiveSampleJobs returns the ids of a comparison's SampleJobs that are
// queued or running (River's job table), for pause and cancel.
func (s *Store) ActiveSampleJobs(ctx context.Context, comparisonID int64) ([]int64, error) {
	return s.ActiveJobs(ctx, comparisonID, "sample")
}

// ActiveJobs returns the ids of a comparison's unfinished River jobs of the
// given kinds (all kinds when none is given).
func (s *Store) ActiveJobs(ctx context.Context, comparisonID int64, kinds ...string) ([]int64, error) {
	rows, err := s.db.Query(ctx, `SELECT id FROM river_job WHERE (cardinality($2::text[]) = 0 OR kind = ANY($2))
		AND state IN ('available', 'pending', 'running', 'retryable', 'scheduled')
		AND args ? 'comparison_id' AND (args->>'comparison_id')::bigint = $1`, comparisonID, kinds)
	if err != nil {
		return nil, fmt.Errorf("sample jobs of comparison %d: %w", comparisonID, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("sample jobs of comparison %d: %w", comparisonID, err)
	}
	return ids, nil
}

package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reach-lab/reach/internal/verify"
)

// SampledCell is what an adaptive design knows of one run on one problem:
// the sample indices its chunks cover so far and the samples stored in them.
type SampledCell struct {
	RunID     int64
	ProblemID int64
	// Extent is one past the last sample index any chunk of the cell covers:
	// the next round's indices start there.
	Extent int
	// Graded samples (any status but pending), Solved of them under the
	// comparison's grading policy (as AggregateRun counts c), and Pending
	// samples still waiting for a verdict.
	Graded, Solved, Pending int
	// Failed: a chunk of the cell failed for good, so the problem drops out
	// of the run's counts (AggregateRun) and more samples would not count.
	Failed bool
}

// SampledCells returns every (run, problem) of a comparison's endpoint runs
// that has chunks. Cells without chunks are absent (nothing drawn yet).
func (s *Store) SampledCells(ctx context.Context, comparisonID int64) ([]SampledCell, error) {
	rows, err := s.db.Query(ctx, `WITH ch AS (
			SELECT k.run_id, k.problem_id, max(k.first_index + k.count) AS extent, bool_or(k.status = 'failed') AS failed
			FROM sample_chunks k JOIN runs r ON r.id = k.run_id
			WHERE r.comparison_id = $1 GROUP BY k.run_id, k.problem_id),
		sm AS (
			SELECT s.run_id, s.problem_id, count(*) FILTER (WHERE s.status <> 'pending') AS graded,
				count(*) FILTER (WHERE `+solveSQL+`) AS solved, count(*) FILTER (WHERE s.status = 'pending') AS pending
			FROM samples s JOIN problems p ON p.id = s.problem_id
				JOIN runs r ON r.id = s.run_id JOIN comparisons cmp ON cmp.id = r.comparison_id
			WHERE r.comparison_id = $1 AND r.endpoint_url <> '' GROUP BY s.run_id, s.problem_id)
		SELECT ch.run_id, ch.problem_id, ch.extent, ch.failed, COALESCE(sm.graded, 0), COALESCE(sm.solved, 0), COALESCE(sm.pending, 0)
		FROM ch LEFT JOIN sm USING (run_id, problem_id) ORDER BY ch.run_id, ch.problem_id`, comparisonID, verify.FallbackRules)
	if err != nil {
		return nil, fmt.Errorf("sampled cells of comparison %d: %w", comparisonID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (SampledCell, error) {
		var c SampledCell
		err := row.Scan(&c.RunID, &c.ProblemID, &c.Extent, &c.Failed, &c.Graded, &c.Solved, &c.Pending)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("sampled cells of comparison %d: %w", comparisonID, err)
	}
	return out, nil
}

// AddChunks creates new pending chunks. A chunk that exists already is an
// error: callers plan new indices beyond every existing chunk.
func (s *Store) AddChunks(ctx context.Context, chunks []Chunk) error {
	if len(chunks) == 0 {
		return nil
	}
	runs, pids := make([]int64, len(chunks)), make([]int64, len(chunks))
	firsts, counts := make([]int32, len(chunks)), make([]int32, len(chunks))
	for i, c := range chunks {
		if c.Count < 1 || c.First < 0 {
			return fmt.Errorf("chunk of run %d on problem %d: first %d, count %d", c.RunID, c.ProblemID, c.First, c.Count)
		}
		runs[i], pids[i], firsts[i], counts[i] = c.RunID, c.ProblemID, int32(c.First), int32(c.Count)
	}
	_, err := s.db.Exec(ctx, `INSERT INTO sample_chunks (run_id, problem_id, first_index, count)
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::int[])`, runs, pids, firsts, counts)
	if err != nil {
		return fmt.Errorf("create %d chunks: %w", len(chunks), err)
	}
	return nil
}

// OpenChunksOfComparison counts the pending chunks of all of a comparison's
// runs.
func (s *Store) OpenChunksOfComparison(ctx context.Context, comparisonID int64) (int, error) {
	var n int
	err := s.db.QueryRow(ctx, `SELECT count(*) FROM sample_chunks k JOIN runs r ON r.id = k.run_id
		WHERE r.comparison_id = $1 AND k.status = 'pending'`, comparisonID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("open chunks of comparison %d: %w", comparisonID, err)
	}
	return n, nil
}

// AdaptiveRound is one run of an adaptive design's planner: a round when
// Planned > 0, else the record that the design was done.
type AdaptiveRound struct {
	Seq     int
	Drawn   int64 // samples stored when it was planned
	Planned int64 // samples the round asks for
	Budget  int64
	// Widest is, by run id, the widest 95% interval of the run's pass@k
	// over the curve's ks (adaptive.Summarize) on the counts it was planned
	// from; a run without one (a problem not drawn yet) is absent.
	Widest    map[int64]float64
	CreatedAt time.Time
}

// AddAdaptiveRound records a plan of a comparison's adaptive design and
// returns its sequence number.
func (s *Store) AddAdaptiveRound(ctx context.Context, comparisonID int64, r AdaptiveRound) (int, error) {
	w := r.Widest
	if w == nil {
		w = map[int64]float64{}
	}
	b, err := json.Marshal(w) // integer keys become JSON strings
	if err != nil {
		return 0, err
	}
	var seq int
	err = s.db.QueryRow(ctx, `INSERT INTO adaptive_rounds (comparison_id, seq, drawn, planned, budget, widest)
		SELECT $1, COALESCE(max(seq), 0) + 1, $2, $3, $4, $5 FROM adaptive_rounds WHERE comparison_id = $1
		RETURNING seq`, comparisonID, r.Drawn, r.Planned, r.Budget, b).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("record adaptive round of comparison %d: %w", comparisonID, err)
	}
	return seq, nil
}

// AdaptiveProgress returns how many rounds a comparison's adaptive design
// has planned (rows with Planned > 0) and its latest record (nil before the
// first).
func (s *Store) AdaptiveProgress(ctx context.Context, comparisonID int64) (rounds int, last *AdaptiveRound, err error) {
	var (
		r   AdaptiveRound
		raw []byte
	)
	err = s.db.QueryRow(ctx, `SELECT (SELECT count(*) FROM adaptive_rounds WHERE comparison_id = $1 AND planned > 0),
			seq, drawn, planned, budget, widest, created_at
		FROM adaptive_rounds WHERE comparison_id = $1 ORDER BY seq DESC LIMIT 1`, comparisonID).
		Scan(&rounds, &r.Seq, &r.Drawn, &r.Planned, &r.Budget, &raw, &r.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("adaptive rounds of comparison %d: %w", comparisonID, err)
	}
	if err := json.Unmarshal(raw, &r.Widest); err != nil {
		return 0, nil, fmt.Errorf("adaptive rounds of comparison %d: widest: %w", comparisonID, err)
	}
	return rounds, &r, nil
}

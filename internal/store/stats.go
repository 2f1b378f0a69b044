package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reach-lab/reach/internal/verify"
)

// Stats is one cached statistics row of a comparison: the JSON the
// statistics job computed for a report variant, and the hash of the counts
// it was computed from.
type Stats struct {
	ComparisonID int64
	Variant      string
	Hash         string
	Status       string // ready | failed
	Error        string
	Data         []byte // JSON
	ComputedAt   time.Time
}

// GetStats returns the cached statistics of a comparison's report variant,
// or ErrNotFound.
func (s *Store) GetStats(ctx context.Context, comparisonID int64, variant string) (Stats, error) {
	st := Stats{ComparisonID: comparisonID, Variant: variant}
	err := s.db.QueryRow(ctx, `SELECT hash, status, error, data, computed_at FROM comparison_stats
		WHERE comparison_id = $1 AND variant = $2`, comparisonID, variant).
		Scan(&st.Hash, &st.Status, &st.Error, &st.Data, &st.ComputedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, fmt.Errorf("statistics of comparison %d (%s): %w", comparisonID, variant, ErrNotFound)
	}
	if err != nil {
		return st, fmt.Errorf("statistics of comparison %d (%s): %w", comparisonID, variant, err)
	}
	return st, nil
}

// PutStats stores (replaces) the cached statistics of a report variant.
// data must be JSON; status is "ready" or "failed" (with errText).
func (s *Store) PutStats(ctx context.Context, st Stats) error {
	data := st.Data
	if len(data) == 0 {
		data = []byte("{}")
	}
	_, err := s.db.Exec(ctx, `INSERT INTO comparison_stats (comparison_id, variant, hash, status, error, data, computed_at)
		VALUES ($1, $2, $3, $4, $5, $6, now())
		ON CONFLICT (comparison_id, variant) DO UPDATE SET hash = EXCLUDED.hash, status = EXCLUDED.status,
			error = EXCLUDED.error, data = EXCLUDED.data, computed_at = now()`,
		st.ComparisonID, st.Variant, st.Hash, st.Status, st.Error, string(data))
	if err != nil {
		return fmt.Errorf("store statistics of comparison %d (%s): %w", st.ComparisonID, st.Variant, err)
	}
	return nil
}

// ComparisonsNeedingStats returns the ready comparisons whose "all" variant
// has no cached statistics computed since the comparison last changed
// (its updated_at), oldest first, at most limit.
func (s *Store) ComparisonsNeedingStats(ctx context.Context, limit int) ([]int64, error) {
	rows, err := s.db.Query(ctx, `SELECT c.id FROM comparisons c WHERE c.status = 'ready' AND NOT EXISTS (
			SELECT 1 FROM comparison_stats s WHERE s.comparison_id = c.id AND s.variant = 'all' AND s.computed_at >= c.updated_at)
		ORDER BY c.id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("comparisons needing statistics: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("comparisons needing statistics: %w", err)
	}
	return ids, nil
}

// Answer is one sample's verdict and extracted answer, for majority voting.
type Answer struct {
	// SampleIndex is the sample's index; from AnswersForRun, the first
	// sample's with the same verdict, answer and program (see there).
	SampleIndex int
	Correct     bool
	// Extracted is the verifier's extracted answer, or the file's when the
	// verifier did not extract one; "" when neither did.
	Extracted string
	// Program identifies a code problem's completion by its text without
	// white space ("program:" and an MD5 of it), for answer diversity:
	// code has no final answer to extract. "" for other problems.
	Program string
}

// AnswersForRun returns a run's samples' answers grouped by problem id.
// Postgres groups the samples by problem, verdict, answer and program and
// sends one row per group with its size and first sample; each group
// becomes that many Answers (sharing their strings), the groups of a
// problem in the order of their first samples. So every answer, verdict and
// program first appears in the same order as in sample order, which is
// all the statistics depend on (maj@k and answer diversity group answers
// in order of first appearance), while a run of 500 problems × 1,024
// samples sends a few thousand rows instead of half a million.
func (s *Store) AnswersForRun(ctx context.Context, runID int64) (map[int64][]Answer, error) {
	rows, err := s.db.Query(ctx, `SELECT s.problem_id, s.status = 'correct',
			CASE WHEN s.extracted <> '' THEN s.extracted ELSE s.file_extracted END,
			CASE WHEN p.kind = 'code' THEN 'program:' || md5(regexp_replace(s.completion, '\s', '', 'g')) ELSE '' END,
			count(*), min(s.sample_index) AS first
		FROM samples s JOIN problems p ON p.id = s.problem_id WHERE s.run_id = $1
		GROUP BY 1, 2, 3, 4 ORDER BY 1, first`, runID)
	if err != nil {
		return nil, fmt.Errorf("answers of run %d: %w", runID, err)
	}
	defer rows.Close()
	out := map[int64][]Answer{}
	for rows.Next() {
		var pid int64
		var n int
		var a Answer
		if err := rows.Scan(&pid, &a.Correct, &a.Extracted, &a.Program, &n, &a.SampleIndex); err != nil {
			return nil, fmt.Errorf("answers of run %d: %w", runID, err)
		}
		as := out[pid]
		for range n {
			as = append(as, a)
		}
		out[pid] = as
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("answers of run %d: %w", runID, err)
	}
	return out, nil
}

// AnswersFromGroups is AnswersForRun read from the run's answer groups
// (run_answers, written by AggregateRun) instead of its samples: a few
// thousand rows for 500 problems × 1,024 samples, not a scan of them all.
// Answers are AnswerSQL's, trimmed of surrounding white space (so an answer
// of only white space is no answer), and Program is always "": callers
// with code problems use AnswersForRun. ok is false when some group was
// aggregated before the groups kept their first samples (migration
// 00121), or the run has no groups: the caller then scans the samples.
func (s *Store) AnswersFromGroups(ctx context.Context, runID int64) (out map[int64][]Answer, ok bool, err error) {
	rows, err := s.db.Query(ctx, `SELECT problem_id, answer, n, correct, first_correct, first_wrong
		FROM run_answers WHERE run_id = $1 ORDER BY problem_id`, runID)
	if err != nil {
		return nil, false, fmt.Errorf("answer groups of run %d: %w", runID, err)
	}
	defer rows.Close()
	type group struct {
		a Answer
		n int
	}
	out = map[int64][]Answer{}
	var groups []group
	var prev int64
	flush := func() {
		if len(groups) == 0 {
			return
		}
		// In order of first appearance, as AnswersForRun sends them.
		slices.SortFunc(groups, func(x, y group) int { return x.a.SampleIndex - y.a.SampleIndex })
		var as []Answer
		for _, g := range groups {
			for range g.n {
				as = append(as, g.a)
			}
		}
		out[prev] = as
		groups = groups[:0]
	}
	for rows.Next() {
		var pid int64
		var answer string
		var n, correct int
		var firstCorrect, firstWrong *int
		if err := rows.Scan(&pid, &answer, &n, &correct, &firstCorrect, &firstWrong); err != nil {
			return nil, false, fmt.Errorf("answer groups of run %d: %w", runID, err)
		}
		if (correct > 0 && firstCorrect == nil) || (n > correct && firstWrong == nil) {
			return nil, false, nil // aggregated before 00121
		}
		if pid != prev {
			flush()
			prev = pid
		}
		if correct > 0 {
			groups = append(groups, group{Answer{SampleIndex: *firstCorrect, Correct: true, Extracted: answer}, correct})
		}
		if n > correct {
			groups = append(groups, group{Answer{SampleIndex: *firstWrong, Extracted: answer}, n - correct})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("answer groups of run %d: %w", runID, err)
	}
	flush()
	return out, len(out) > 0, nil
}

// TouchStats marks a cached row as checked now (its counts have not
// changed), so the periodic sweep leaves it alone.
func (s *Store) TouchStats(ctx context.Context, comparisonID int64, variant string) error {
	_, err := s.db.Exec(ctx, `UPDATE comparison_stats SET computed_at = now() WHERE comparison_id = $1 AND variant = $2`, comparisonID, variant)
	if err != nil {
		return fmt.Errorf("touch statistics of comparison %d (%s): %w", comparisonID, variant, err)
	}
	return nil
}

// HasSolveLabels reports whether a person labelled the reasoning of any
// sample of the comparison that counts as a solve under its grading
// policy (CoTCounts's Human > 0 somewhere), without counting every sample:
// the labels are few, each is looked up by its sample's key.
func (s *Store) HasSolveLabels(ctx context.Context, comparisonID int64) (bool, error) {
	var ok bool
	err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM sample_reasoning_labels l
			JOIN runs r ON r.id = l.run_id JOIN comparisons cmp ON cmp.id = r.comparison_id
			JOIN samples s ON s.run_id = l.run_id AND s.problem_id = l.problem_id AND s.sample_index = l.sample_index
			JOIN problems p ON p.id = s.problem_id
		WHERE r.comparison_id = $1 AND `+solveSQL+`)`, comparisonID, verify.FallbackRules).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("reasoning labels of comparison %d: %w", comparisonID, err)
	}
	return ok, nil
}

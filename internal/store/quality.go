package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// RunQuality is what one run's samples say about how far its counts can be
// trusted (issue "no silent wrong numbers"). Only runs with stored samples
// have one; counts-only imports do not.
type RunQuality struct {
	RunID   int64
	Samples int64 // samples scanned
	// Truncated: finish_reason = 'length', cut by the token limit; nil when
	// no sample of the run recorded a finish reason (Reach JSONL without
	// finish_reason, lm-eval, OpenCompass, ...): unknown, not 0.
	Truncated      *int64
	FallbackGraded int64 // graded from an answer found by a fallback rule (verify.FallbackRules)
	NoAnswer       int64 // no answer could be extracted or read
	// DistinctMin is the fewest distinct completion texts on one problem
	// (texts compared by MD5), DistinctMinN that problem's sample count and
	// DistinctMinProblem its id. RepeatedProblems counts the problems with
	// fewer distinct texts than samples.
	DistinctMin        int
	DistinctMinN       int
	DistinctMinProblem int64
	RepeatedProblems   int
	// Duplicates: DupChecked counts the problems with at least DupMinN
	// samples whose completions average at least DupMinBytes bytes (shorter
	// answers, "42", repeat legitimately); DupProblems those of them with
	// at most half as many distinct texts as samples; DupWorst* the one of
	// those with the fewest distinct texts per sample (its id, n and
	// distinct texts). Nil when not computed (no run_duplicates row).
	DupChecked       *int
	DupProblems      *int
	DupWorstProblem  int64
	DupWorstN        int
	DupWorstDistinct int
	// GradingPolicy is how the run's verdicts count: "file" when they all
	// come from its file, else the comparison's policy ("strict" or
	// "lenient"). RunQualities fills it.
	GradingPolicy string
	ComputedAt    time.Time
}

// Thresholds of RunQuality's duplicate figures.
const (
	DupMinN     = 8  // fewer samples: too few to tell
	DupMinBytes = 32 // completions averaging fewer bytes repeat legitimately
)

// truncationUnknown is run_quality.truncated for a run none of whose
// samples recorded a finish reason (the column is NOT NULL; the sentinel
// spares a migration).
const truncationUnknown = -1

// RefreshRunQuality recomputes a run's RunQuality from its samples in one
// scan and stores it (run_quality and run_duplicates); a run without samples
// gets no row (any old one is removed). fallbackRules are the extraction
// rules that count as fallbacks (verify.FallbackRules). Cost: one pass over
// the run's samples; texts are compared by the hash stored with them at
// import (samples.text_hash), and only a sample stored without one has its
// completion read and hashed.
func (s *Store) RefreshRunQuality(ctx context.Context, runID int64, fallbackRules []string) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM run_quality WHERE run_id = $1`, runID); err != nil {
		return fmt.Errorf("quality of run %d: %w", runID, err)
	}
	if _, err := s.db.Exec(ctx, `DELETE FROM run_duplicates WHERE run_id = $1`, runID); err != nil {
		return fmt.Errorf("quality of run %d: %w", runID, err)
	}
	// p is read twice, so Postgres materialises it: the samples are scanned once.
	_, err := s.db.Exec(ctx, `WITH p AS (
			SELECT problem_id, count(*) AS n,
				count(*) FILTER (WHERE finish_reason = 'length') AS truncated,
				bool_or(finish_reason <> '') AS has_reason,
				count(*) FILTER (WHERE split_part(rule, '+', 1) = ANY($2)) AS fallback,
				-- A program is graded by its tests, not by an extracted answer:
				-- code samples count as "no answer" only when unparseable.
				count(*) FILTER (WHERE status = 'unparseable'
					OR (status IN ('correct', 'incorrect') AND verdict_source NOT IN ('', 'file') AND extracted = ''
						AND NOT EXISTS (SELECT 1 FROM problems pr WHERE pr.id = samples.problem_id AND pr.kind = 'code'))) AS no_answer,
				count(DISTINCT COALESCE(text_hash, md5(completion)::uuid)) AS distinct_texts,
				count(*) >= $3 AND avg(octet_length(completion)) >= $4 AS checked
			FROM samples WHERE run_id = $1 GROUP BY problem_id),
		q AS (INSERT INTO run_quality (run_id, samples, truncated, fallback_graded, no_answer,
				distinct_min, distinct_min_n, distinct_min_problem, repeated_problems)
			SELECT $1, sum(n), CASE WHEN bool_or(has_reason) THEN sum(truncated) ELSE $5 END, sum(fallback), sum(no_answer),
				min(distinct_texts), (array_agg(n ORDER BY distinct_texts, problem_id))[1],
				(array_agg(problem_id ORDER BY distinct_texts, problem_id))[1],
				count(*) FILTER (WHERE distinct_texts < n)
			FROM p HAVING count(*) > 0)
		INSERT INTO run_duplicates (run_id, checked, duplicated, worst_problem, worst_n, worst_distinct)
		SELECT $1, count(*) FILTER (WHERE checked), count(*) FILTER (WHERE checked AND 2 * distinct_texts <= n),
			(array_agg(problem_id ORDER BY distinct_texts::float8 / n, problem_id) FILTER (WHERE checked AND 2 * distinct_texts <= n))[1],
			(array_agg(n ORDER BY distinct_texts::float8 / n, problem_id) FILTER (WHERE checked AND 2 * distinct_texts <= n))[1],
			(array_agg(distinct_texts ORDER BY distinct_texts::float8 / n, problem_id) FILTER (WHERE checked AND 2 * distinct_texts <= n))[1]
		FROM p HAVING count(*) > 0`, runID, fallbackRules, DupMinN, DupMinBytes, int64(truncationUnknown))
	if err != nil {
		return fmt.Errorf("quality of run %d: %w", runID, err)
	}
	return nil
}

// RunQualities returns the stored RunQuality of every run of a comparison
// that has one, keyed by run id.
func (s *Store) RunQualities(ctx context.Context, comparisonID int64) (map[int64]RunQuality, error) {
	rows, err := s.db.Query(ctx, `SELECT q.run_id, q.samples, q.truncated, q.fallback_graded, q.no_answer, q.distinct_min,
			q.distinct_min_n, COALESCE(q.distinct_min_problem, 0), q.repeated_problems, q.computed_at,
			d.checked, d.duplicated, COALESCE(d.worst_problem, 0), COALESCE(d.worst_n, 0), COALESCE(d.worst_distinct, 0),
			CASE WHEN r.verdict_source IN ('', 'file') THEN 'file' ELSE c.grading_policy END
		FROM run_quality q JOIN runs r ON r.id = q.run_id JOIN comparisons c ON c.id = r.comparison_id
			LEFT JOIN run_duplicates d ON d.run_id = q.run_id
		WHERE r.comparison_id = $1`, comparisonID)
	if err != nil {
		return nil, fmt.Errorf("quality of comparison %d: %w", comparisonID, err)
	}
	defer rows.Close()
	out := map[int64]RunQuality{}
	for rows.Next() {
		var q RunQuality
		var truncated int64
		if err := rows.Scan(&q.RunID, &q.Samples, &truncated, &q.FallbackGraded, &q.NoAnswer, &q.DistinctMin,
			&q.DistinctMinN, &q.DistinctMinProblem, &q.RepeatedProblems, &q.ComputedAt,
			&q.DupChecked, &q.DupProblems, &q.DupWorstProblem, &q.DupWorstN, &q.DupWorstDistinct, &q.GradingPolicy); err != nil {
			return nil, fmt.Errorf("quality of comparison %d: %w", comparisonID, err)
		}
		if truncated != truncationUnknown {
			q.Truncated = &truncated
		}
		out[q.RunID] = q
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("quality of comparison %d: %w", comparisonID, err)
	}
	return out, nil
}

// UngradedSample is one sample of a run that Reach could not grade from a
// marked final answer: its problem's key, its index, the rule that took its
// answer ("" when none was found), its status and the end of its
// completion (its last UngradedTail characters).
type UngradedSample struct {
	Problem string
	Index   int
	Rule    string
	Status  string
	Tail    string
}

// UngradedTail is how much of a completion's end UngradedSample keeps: the
// part where a final answer is usually marked.
const UngradedTail = 160

// UngradedExample returns the first sample (by problem and index) of a run
// whose answer came from a fallback rule (fallbackRules; pass nil to skip
// them) or that has no readable answer, as RefreshRunQuality counts them;
// ok is false when there is none. It reads one row: the caller asks only
// when most of the run's samples are such, so the scan stops early.
func (s *Store) UngradedExample(ctx context.Context, runID int64, fallbackRules []string) (UngradedSample, bool, error) {
	var u UngradedSample
	err := s.db.QueryRow(ctx, `SELECT p.key, s.sample_index, s.rule, s.status, right(s.completion, $3)
		FROM samples s JOIN problems p ON p.id = s.problem_id
		WHERE s.run_id = $1 AND (split_part(s.rule, '+', 1) = ANY($2) OR s.status = 'unparseable'
			OR (s.status IN ('correct', 'incorrect') AND s.verdict_source NOT IN ('', 'file') AND s.extracted = '' AND p.kind <> 'code'))
		ORDER BY s.problem_id, s.sample_index LIMIT 1`, runID, fallbackRules, UngradedTail).Scan(&u.Problem, &u.Index, &u.Rule, &u.Status, &u.Tail)
	if errors.Is(err, pgx.ErrNoRows) {
		return u, false, nil
	}
	if err != nil {
		return u, false, fmt.Errorf("ungraded sample of run %d: %w", runID, err)
	}
	return u, true, nil
}

package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reach-lab/reach/internal/verify"
)

// Count is one run's n (samples) and c (correct samples) on one problem.
type Count struct {
	RunID     int64
	ProblemID int64
	N, C      int
}

// InsertCounts copies per-problem counts of a run (counts-only imports).
func (s *Store) InsertCounts(ctx context.Context, cs []Count) error {
	rows := make([][]any, len(cs))
	for i, c := range cs {
		rows[i] = []any{c.RunID, c.ProblemID, c.N, c.C}
	}
	if _, err := s.db.CopyFrom(ctx, pgx.Identifier{"run_counts"}, []string{"run_id", "problem_id", "n", "c"}, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("insert %d counts: %w", len(cs), err)
	}
	return nil
}

// AnalyzeSamples refreshes the planner's statistics of runIDs' samples
// (each run's partition, or samples_legacy for runs from before migration
// 00182) and of the per-run tables derived from them (ANALYZE reads a
// fixed-size sample of rows, so it takes about a second whatever the
// table's size). Not samples itself: ANALYZE of a partitioned table reads
// every partition, a cost that grows with the runs stored; a query of one
// run is planned from its partition's statistics. A table another session
// holds a conflicting lock on is skipped (autovacuum analyses it later): a
// search index being built (CREATE INDEX CONCURRENTLY, a minute on a
// million texts) would otherwise hold an import's end until it finishes.
func (s *Store) AnalyzeSamples(ctx context.Context, runIDs ...int64) error {
	tables := []string{"run_counts", "run_answers"}
	seen := map[string]bool{}
	for _, id := range runIDs {
		own, err := s.ownPartition(ctx, id)
		if err != nil {
			return fmt.Errorf("analyze samples: %w", err)
		}
		t := legacySamples
		if own {
			t = SamplePartition(id)
		}
		if !seen[t] {
			seen[t] = true
			tables = append(tables, t)
		}
	}
	if _, err := s.db.Exec(ctx, `ANALYZE (SKIP_LOCKED) `+strings.Join(tables, ", ")); err != nil {
		return fmt.Errorf("analyze samples: %w", err)
	}
	return nil
}

// AnalyzeProblems refreshes the planner's statistics of the problems
// table: planned from statistics taken before a dataset of 500 problems was
// loaded, the statement search read every statement (15 ms) instead of
// using its full-text index (1.5 ms). It reads at most 30,000 rows.
func (s *Store) AnalyzeProblems(ctx context.Context) error {
	if _, err := s.db.Exec(ctx, `ANALYZE problems`); err != nil {
		return fmt.Errorf("analyze problems: %w", err)
	}
	return nil
}

// AggregateRun recomputes a run's per-problem counts from its verified
// samples under its comparison's grading policy. Samples still pending
// count towards n but not c; callers aggregate after verification.
//
// Under the strict policy a correct verdict is not a solve when the answer
// was taken by a fallback rule (verify.FallbackRules: the completion never
// marked it as final), nor when a math or multiple-choice completion was
// cut off by the length limit (its last answer may be tentative). File
// verdicts follow the policy of the tool that wrote them, and a reviewer's
// override is final under both policies.
func (s *Store) AggregateRun(ctx context.Context, runID int64) error {
	// Two aggregations of one run at once (a late duplicate job, or a
	// resumed one next to a new one) would both delete, then both insert:
	// the second failed on run_counts' key. The run's row lock orders them
	// (inside a transaction; it does not block inserts of samples).
	if _, err := s.db.Exec(ctx, `SELECT 1 FROM runs WHERE id = $1 FOR NO KEY UPDATE`, runID); err != nil {
		return fmt.Errorf("aggregate run %d: %w", runID, err)
	}
	for _, table := range []string{"run_counts", "run_answers"} {
		if _, err := s.db.Exec(ctx, `DELETE FROM `+table+` WHERE run_id = $1`, runID); err != nil {
			return fmt.Errorf("aggregate run %d: %w", runID, err)
		}
	}
	// One scan of the run's samples: grouped by problem and answer into
	// run_answers, and those groups summed per problem into run_counts
	// (solves are the correct verdicts less the uncounted ones; the token
	// sums ride along so the report need not read the samples again).
	// The same scan counts the run's samples by how they were graded
	// (run_grading, for PolicyScopeOf and FileVerdictsReplaced): an
	// override aggregates its run, so those stay exact too.
	_, err := s.db.Exec(ctx, `WITH g AS (`+answerGroupsCols+gradingGroupCounts+answerGroupsFrom+gradingGroupFlags+answerGroupsJoin+
		`WHERE s.run_id = $1`+answerGroupsBy+`),
		a AS (INSERT INTO run_answers (run_id, problem_id, answer, n, correct, fallback, truncated, first_correct, first_wrong)
			SELECT run_id, problem_id, answer, n, correct, fallback, truncated, first_correct, first_wrong FROM g),
		k AS (`+upsertRunGrading+`)
		INSERT INTO run_counts (run_id, problem_id, n, c, token_samples, tokens)
		SELECT run_id, problem_id, sum(n), sum(correct - fallback - truncated), sum(token_samples), sum(tokens) FROM g
		WHERE problem_id NOT IN (SELECT problem_id FROM sample_chunks WHERE run_id = $1 AND status = 'failed')
		GROUP BY run_id, problem_id`, runID, verify.FallbackRules)
	if err != nil {
		return fmt.Errorf("aggregate run %d: %w", runID, err)
	}
	return nil
}

// answerGroupsSQL and answerGroupsBy, with a WHERE clause on samples s
// between them, group samples by run, problem and answer (AnswerSQL):
// how many, how many graded correct, how many of those the grading
// policy does not count, by why (uncountedSQL), the first sample index
// graded correct and not, and how many carry a token count with their sum
// (TokenSum). $2 is verify.FallbackRules.
// AggregateRun puts the grading groups' flags and counts
// (gradingGroupFlags, gradingGroupCounts) between the parts.
const (
	answerGroupsCols = `SELECT run_id, problem_id, answer, count(*) AS n, count(*) FILTER (WHERE status = 'correct') AS correct,
			count(*) FILTER (WHERE why = '` + UncountedFallback + `') AS fallback, count(*) FILTER (WHERE why = '` + UncountedLength + `') AS truncated,
			min(sample_index) FILTER (WHERE status = 'correct') AS first_correct, min(sample_index) FILTER (WHERE status <> 'correct') AS first_wrong,
			count(*) FILTER (WHERE completion_tokens > 0) AS token_samples, COALESCE(sum(completion_tokens) FILTER (WHERE completion_tokens > 0), 0) AS tokens`
	answerGroupsFrom = `
		FROM (SELECT s.run_id, s.problem_id, s.sample_index, ` + AnswerSQL + ` AS answer,
				s.status, ` + uncountedSQL + ` AS why, s.completion_tokens`
	answerGroupsJoin = `
			FROM samples s JOIN problems p ON p.id = s.problem_id
				JOIN runs r ON r.id = s.run_id JOIN comparisons cmp ON cmp.id = r.comparison_id
			`
	answerGroupsSQL = answerGroupsCols + answerGroupsFrom + answerGroupsJoin
	answerGroupsBy  = `) x GROUP BY run_id, problem_id, answer`
)

// FillAnswerGroups computes run_answers for every run that has none (the
// runs aggregated before the table existed): migration 00091. Cost: one
// scan of those runs' samples.
func FillAnswerGroups(ctx context.Context, tx *sql.Tx) error {
	var runs []int64
	rows, err := tx.QueryContext(ctx, `SELECT id FROM runs WHERE NOT EXISTS (SELECT 1 FROM run_answers a WHERE a.run_id = runs.id)`)
	if err != nil {
		return fmt.Errorf("fill answer groups: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("fill answer groups: %w", err)
		}
		runs = append(runs, id)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("fill answer groups: %w", err)
	}
	if len(runs) == 0 {
		return nil
	}
	// Its columns as of 00090: it runs before the later ones exist.
	_, err = tx.ExecContext(ctx, `INSERT INTO run_answers (run_id, problem_id, answer, n, correct, fallback, truncated)
		SELECT run_id, problem_id, answer, n, correct, fallback, truncated FROM (`+answerGroupsSQL+`WHERE s.run_id = ANY($1)`+answerGroupsBy+`) g`,
		runs, verify.FallbackRules)
	if err != nil {
		return fmt.Errorf("fill answer groups of %d runs: %w", len(runs), err)
	}
	return nil
}

// solveSQL is the condition under which a sample s (of problem p, in
// comparison cmp) counts as a solve; $2 is verify.FallbackRules.
const solveSQL = `s.status = 'correct' AND (cmp.grading_policy = 'lenient' OR s.override_at IS NOT NULL
	OR s.verdict_source = 'file'
	OR (NOT split_part(s.rule, '+', 1) = ANY($2::text[]) AND NOT (s.finish_reason = 'length' AND p.kind IN ('', 'math', 'choice'))))`

// uncountedSQL says why a sample s that its verdict calls correct is not a
// solve under its comparison's policy (solveSQL): 'fallback' (the answer
// came from a fallback rule), 'length' (a math or multiple-choice
// completion cut by the length limit), or the empty string when it counts
// or is not correct. $2 is verify.FallbackRules, as in solveSQL.
const uncountedSQL = `CASE WHEN s.status = 'correct' AND NOT (` + solveSQL + `)
	THEN CASE WHEN split_part(s.rule, '+', 1) = ANY($2::text[]) THEN 'fallback' ELSE 'length' END ELSE '' END`

// Why a sample graded correct is not counted (Sample.Uncounted).
const (
	UncountedFallback = "fallback" // its answer came from a fallback rule (verify.FallbackRules)
	UncountedLength   = "length"   // a math or multiple-choice completion cut by the length limit
)

// CountsForComparison returns every run's per-problem counts, keyed by run id.
func (s *Store) CountsForComparison(ctx context.Context, comparisonID int64) (map[int64][]Count, error) {
	// Each run's list is sized for its dataset's problems: grown by
	// appending, a million counts allocated five times their size.
	var size int
	if err := s.db.QueryRow(ctx, `SELECT coalesce((SELECT d.problem_count FROM comparisons c JOIN datasets d ON d.id = c.dataset_id
		WHERE c.id = $1), 0)`, comparisonID).Scan(&size); err != nil {
		return nil, fmt.Errorf("counts of comparison %d: %w", comparisonID, err)
	}
	rows, err := s.db.Query(ctx, `SELECT rc.run_id, rc.problem_id, rc.n, rc.c FROM run_counts rc
		JOIN runs r ON r.id = rc.run_id WHERE r.comparison_id = $1 ORDER BY rc.run_id, rc.problem_id`, comparisonID)
	if err != nil {
		return nil, fmt.Errorf("counts of comparison %d: %w", comparisonID, err)
	}
	defer rows.Close()
	out := map[int64][]Count{}
	var c Count // scanned into once: a variable per row escaped, 160 MB at a million problems
	for rows.Next() {
		if err := rows.Scan(&c.RunID, &c.ProblemID, &c.N, &c.C); err != nil {
			return nil, fmt.Errorf("counts of comparison %d: %w", comparisonID, err)
		}
		l, ok := out[c.RunID]
		if !ok {
			l = make([]Count, 0, min(max(size, 1), 1<<24))
		}
		out[c.RunID] = append(l, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("counts of comparison %d: %w", comparisonID, err)
	}
	return out, nil
}

// Progress is one stage (import, verify, aggregate) of one run.
type Progress struct {
	RunID     int64
	Stage     string
	Done      int64
	Total     int64
	Unit      string
	Detail    string
	Status    string // queued | running | done | failed
	Error     string
	UpdatedAt time.Time
}

// SetProgress upserts the progress of one stage of a run. A run whose
// import failed (FailComparisonImport) keeps its failed progress: a job of
// the comparison still stopping may not report its stage running or done.
func (s *Store) SetProgress(ctx context.Context, p Progress) error {
	_, err := s.db.Exec(ctx, `INSERT INTO run_progress (run_id, stage, done, total, unit, status, error, detail, updated_at)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, now()
		WHERE $6 = 'failed' OR NOT EXISTS (SELECT 1 FROM runs WHERE id = $1 AND status = 'failed')
		ON CONFLICT (run_id, stage) DO UPDATE SET done = EXCLUDED.done, total = EXCLUDED.total, unit = EXCLUDED.unit, detail = EXCLUDED.detail,
			status = EXCLUDED.status, error = EXCLUDED.error, updated_at = now()`,
		p.RunID, p.Stage, p.Done, p.Total, p.Unit, p.Status, p.Error, p.Detail)
	if err != nil {
		return fmt.Errorf("set %s progress of run %d: %w", p.Stage, p.RunID, err)
	}
	return nil
}

// ProgressForComparison returns the progress rows of all runs of a comparison.
func (s *Store) ProgressForComparison(ctx context.Context, comparisonID int64) ([]Progress, error) {
	var out []Progress
	err := s.Batch(ctx, s.ProgressInto(comparisonID, &out))
	return out, err
}

// ProgressInto queues ProgressForComparison's query with out as the
// result (Batch).
func (s *Store) ProgressInto(comparisonID int64, out *[]Progress) Queued {
	return func(b *pgx.Batch) {
		b.Queue(`SELECT p.run_id, p.stage, p.done, p.total, p.unit, p.detail, p.status, p.error, p.updated_at
		FROM run_progress p JOIN runs r ON r.id = p.run_id WHERE r.comparison_id = $1 ORDER BY r.position, p.stage`, comparisonID).
			Query(func(rows pgx.Rows) error {
				var err error
				*out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Progress, error) {
					var p Progress
					err := row.Scan(&p.RunID, &p.Stage, &p.Done, &p.Total, &p.Unit, &p.Detail, &p.Status, &p.Error, &p.UpdatedAt)
					return p, err
				})
				if err != nil {
					return fmt.Errorf("progress of comparison %d: %w", comparisonID, err)
				}
				return nil
			})
	}
}

// SetRunReadyIfSettled marks a run ready unless it still has chunks to
// sample or samples awaiting a verdict.
func (s *Store) SetRunReadyIfSettled(ctx context.Context, runID int64) error {
	return s.WithTx(ctx, func(tx *Store) error { return tx.setRunReadyIfSettled(ctx, runID) })
}

func (s *Store) setRunReadyIfSettled(ctx context.Context, runID int64) error {
	// Lock the row first, in its own statement: an UPDATE that waits on a
	// row lock rechecks only that row, and its NOT EXISTS would still read
	// the snapshot from before the wait, missing the chunks an extension
	// committed meanwhile (a late aggregate job then called an extended run
	// ready). The next statement takes a fresh snapshot.
	if _, err := s.db.Exec(ctx, `SELECT 1 FROM runs WHERE id = $1 FOR UPDATE`, runID); err != nil {
		return fmt.Errorf("lock run %d: %w", runID, err)
	}
	_, err := s.db.Exec(ctx, `UPDATE runs SET status = 'ready', error = '' WHERE id = $1
		AND NOT EXISTS (SELECT 1 FROM sample_chunks WHERE run_id = $1 AND status = 'pending')
		AND NOT EXISTS (SELECT 1 FROM samples WHERE run_id = $1 AND status = 'pending')`, runID)
	if err != nil {
		return fmt.Errorf("set run %d ready: %w", runID, err)
	}
	return nil
}

// ProblemCounts returns each run's counts on one problem of a comparison,
// keyed by run id (runs without counts for it are absent).
func (s *Store) ProblemCounts(ctx context.Context, comparisonID, problemID int64) (map[int64]Count, error) {
	var out map[int64]Count
	err := s.Batch(ctx, s.ProblemCountsInto(comparisonID, problemID, &out))
	return out, err
}

// ProblemCountsInto queues ProblemCounts' query with out as the result.
func (s *Store) ProblemCountsInto(comparisonID, problemID int64, out *map[int64]Count) Queued {
	return func(b *pgx.Batch) {
		b.Queue(`SELECT rc.run_id, rc.n, rc.c FROM run_counts rc JOIN runs r ON r.id = rc.run_id
			WHERE r.comparison_id = $1 AND rc.problem_id = $2`, comparisonID, problemID).Query(func(rows pgx.Rows) error {
			*out = map[int64]Count{}
			for rows.Next() {
				c := Count{ProblemID: problemID}
				if err := rows.Scan(&c.RunID, &c.N, &c.C); err != nil {
					return fmt.Errorf("counts of problem %d in comparison %d: %w", problemID, comparisonID, err)
				}
				(*out)[c.RunID] = c
			}
			if err := rows.Err(); err != nil {
				return fmt.Errorf("counts of problem %d in comparison %d: %w", problemID, comparisonID, err)
			}
			return nil
		})
	}
}

package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/reach-lab/reach/internal/verify"
)

// gradingGroups are the groups by which a run's samples (s, of problems p)
// are counted for the grading panel (PolicyScope, FileVerdictsReplaced),
// named by their run_grading columns. Pending samples are in none but
// "samples". $2 is verify.FallbackRules.
var gradingGroups = []struct{ col, where string }{
	{"samples", `true`},
	{"graded", `s.status <> 'pending' AND s.override_at IS NULL AND s.verdict_source <> 'file' AND p.kind <> 'code'`},
	{"file_verdicts", `s.status <> 'pending' AND s.override_at IS NULL AND s.verdict_source = 'file'`},
	{"overrides", `s.status <> 'pending' AND s.override_at IS NOT NULL`},
	{"code", `s.status <> 'pending' AND s.override_at IS NULL AND s.verdict_source <> 'file' AND p.kind = 'code'`},
	{"fallback", `s.status = 'correct' AND s.override_at IS NULL AND s.verdict_source <> 'file'
		AND split_part(s.rule, '+', 1) = ANY($2::text[])`},
	{"truncated", `s.status = 'correct' AND s.override_at IS NULL AND s.verdict_source <> 'file'
		AND NOT split_part(s.rule, '+', 1) = ANY($2::text[]) AND s.finish_reason = 'length' AND p.kind IN ('', 'math', 'choice')`},
	// What RestoreFileVerdicts would restore (pending ones too).
	{"replaced", `s.file_correct IS NOT NULL AND s.override_at IS NULL AND s.verdict_source <> 'file'`},
}

// SQL fragments built from gradingGroups: AggregateRun's per-sample flags
// (g_<col>) and their counts per answer group, the upsert of their sums
// into run_grading (run $1, from the CTE g), and the scan filling it for
// runs $1 (migration 00180).
var (
	gradingGroupFlags, gradingGroupCounts, upsertRunGrading, fillRunGrading string
)

func init() {
	var flags, counts, cols, sums, set, scan strings.Builder
	for _, g := range gradingGroups {
		fmt.Fprintf(&flags, ",\n\t\t\t\t(%s) AS g_%s", g.where, g.col)
		fmt.Fprintf(&counts, ",\n\t\t\tcount(*) FILTER (WHERE g_%s) AS g_%s", g.col, g.col)
		fmt.Fprintf(&cols, ", %s", g.col)
		fmt.Fprintf(&sums, ", COALESCE(sum(g_%s), 0)", g.col)
		fmt.Fprintf(&set, "%s = EXCLUDED.%s, ", g.col, g.col)
		fmt.Fprintf(&scan, ",\n\t\t\tcount(*) FILTER (WHERE %s)", g.where)
	}
	gradingGroupFlags, gradingGroupCounts = flags.String(), counts.String()
	upsertRunGrading = `INSERT INTO run_grading (run_id` + cols.String() + `) SELECT $1` + sums.String() + ` FROM g
		ON CONFLICT (run_id) DO UPDATE SET ` + set.String() + `computed_at = now()`
	fillRunGrading = `INSERT INTO run_grading (run_id` + cols.String() + `) SELECT s.run_id` + scan.String() + `
		FROM samples s JOIN problems p ON p.id = s.problem_id WHERE s.run_id = ANY($1) GROUP BY s.run_id`
}

// PolicyScope is what a comparison's grading policy applies to: which of
// its samples' counting depends on strict versus lenient.
type PolicyScope struct {
	// Graded is the samples of math and multiple-choice problems graded by
	// Reach's verifier (no reviewer's override): the policy applies to them.
	Graded int64
	// FileVerdicts keep their file's verdict, Overrides a reviewer's, and
	// Code samples are graded by their tests: the policy changes none.
	FileVerdicts, Overrides, Code int64
	// Fallback and Truncated are the Graded samples graded correct whose
	// counting the policy decides: answer from a fallback rule, or cut by
	// the length limit (a sample both is in Fallback only). Strict leaves
	// them out, lenient counts them.
	Fallback, Truncated int64
}

// Affected is how many samples count under lenient but not under strict.
func (p PolicyScope) Affected() int64 { return p.Fallback + p.Truncated }

// PolicyScopeOf counts what comparison id's grading policy applies to
// (PolicyScope). Pending samples are in no group. It reads the counts
// AggregateRun keeps per run (run_grading), not the samples.
func (s *Store) PolicyScopeOf(ctx context.Context, comparisonID int64) (PolicyScope, error) {
	var p PolicyScope
	err := s.db.QueryRow(ctx, `SELECT COALESCE(sum(g.graded), 0), COALESCE(sum(g.file_verdicts), 0), COALESCE(sum(g.overrides), 0),
			COALESCE(sum(g.code), 0), COALESCE(sum(g.fallback), 0), COALESCE(sum(g.truncated), 0)
		FROM run_grading g JOIN runs r ON r.id = g.run_id WHERE r.comparison_id = $1`, comparisonID).Scan(
		&p.Graded, &p.FileVerdicts, &p.Overrides, &p.Code, &p.Fallback, &p.Truncated)
	if err != nil {
		return p, fmt.Errorf("grading policy scope of comparison %d: %w", comparisonID, err)
	}
	return p, nil
}

// FileVerdictsReplaced returns, per run of a comparison, how many samples
// carry a verdict from their file that Reach's verifier has replaced (what
// RestoreFileVerdicts would restore); runs with none are left out. Read
// from run_grading, as of the runs' last aggregation.
func (s *Store) FileVerdictsReplaced(ctx context.Context, comparisonID int64) (map[int64]int64, error) {
	return s.runGradingColumn(ctx, comparisonID, "replaced", "replaced file verdicts")
}

// SampleTotals returns, per run of a comparison, how many samples it has
// (pending ones included) as of its last aggregation; runs without
// samples are left out. CountSamples counts them now, at the cost of a scan.
func (s *Store) SampleTotals(ctx context.Context, comparisonID int64) (map[int64]int64, error) {
	return s.runGradingColumn(ctx, comparisonID, "samples", "samples")
}

func (s *Store) runGradingColumn(ctx context.Context, comparisonID int64, col, what string) (map[int64]int64, error) {
	rows, err := s.db.Query(ctx, `SELECT g.run_id, g.`+col+` FROM run_grading g JOIN runs r ON r.id = g.run_id
		WHERE r.comparison_id = $1 AND g.`+col+` > 0`, comparisonID)
	if err != nil {
		return nil, fmt.Errorf("%s of comparison %d: %w", what, comparisonID, err)
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var run, n int64
		if err := rows.Scan(&run, &n); err != nil {
			return nil, fmt.Errorf("%s of comparison %d: %w", what, comparisonID, err)
		}
		out[run] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s of comparison %d: %w", what, comparisonID, err)
	}
	return out, nil
}

// createRunGrading is migration 00180's table: a run's samples counted by
// gradingGroups, kept by AggregateRun. A run without a row has no samples
// (or has not been aggregated since they were stored).
const createRunGrading = `CREATE TABLE run_grading (
	run_id        bigint PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
	samples       bigint NOT NULL, -- all, pending included
	graded        bigint NOT NULL, -- PolicyScope.Graded
	file_verdicts bigint NOT NULL,
	overrides     bigint NOT NULL,
	code          bigint NOT NULL,
	fallback      bigint NOT NULL,
	truncated     bigint NOT NULL,
	replaced      bigint NOT NULL, -- FileVerdictsReplaced
	computed_at   timestamptz NOT NULL DEFAULT now()
)`

// CreateRunGrading is migration 00180: it creates run_grading and fills it
// for every run that has samples. Cost: one scan of all samples (what the
// grading panel paid per comparison on each new report version before).
func CreateRunGrading(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, createRunGrading); err != nil {
		return fmt.Errorf("create run_grading: %w", err)
	}
	var runs []int64
	rows, err := tx.QueryContext(ctx, `SELECT id FROM runs ORDER BY id`)
	if err != nil {
		return fmt.Errorf("fill run_grading: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("fill run_grading: %w", err)
		}
		runs = append(runs, id)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("fill run_grading: %w", err)
	}
	if _, err := tx.ExecContext(ctx, fillRunGrading, runs, verify.FallbackRules); err != nil {
		return fmt.Errorf("fill run_grading of %d runs: %w", len(runs), err)
	}
	return nil
}

package testdb

import (
	"context"
	"maps"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
)

// ScannedGrading is what store.PolicyScopeOf, store.FileVerdictsReplaced
// and store.SampleTotals answered before they read run_grading (migration
// 00180): their counts taken by scanning every sample of the comparison.
// Tests compare the stored counts with it, so they fail if those drift.
func ScannedGrading(t testing.TB, st *store.Store, comparisonID int64) (scope store.PolicyScope, replaced, totals map[int64]int64) {
	t.Helper()
	ctx := context.Background()
	err := st.Pool().QueryRow(ctx, `SELECT
			count(*) FILTER (WHERE s.override_at IS NULL AND s.verdict_source <> 'file' AND p.kind <> 'code'),
			count(*) FILTER (WHERE s.override_at IS NULL AND s.verdict_source = 'file'),
			count(*) FILTER (WHERE s.override_at IS NOT NULL),
			count(*) FILTER (WHERE s.override_at IS NULL AND s.verdict_source <> 'file' AND p.kind = 'code'),
			count(*) FILTER (WHERE s.override_at IS NULL AND s.verdict_source <> 'file' AND s.status = 'correct'
				AND split_part(s.rule, '+', 1) = ANY($2::text[])),
			count(*) FILTER (WHERE s.override_at IS NULL AND s.verdict_source <> 'file' AND s.status = 'correct'
				AND NOT split_part(s.rule, '+', 1) = ANY($2::text[]) AND s.finish_reason = 'length' AND p.kind IN ('', 'math', 'choice'))
		FROM samples s JOIN runs r ON r.id = s.run_id JOIN problems p ON p.id = s.problem_id
		WHERE r.comparison_id = $1 AND s.status <> 'pending'`, comparisonID, verify.FallbackRules).Scan(
		&scope.Graded, &scope.FileVerdicts, &scope.Overrides, &scope.Code, &scope.Fallback, &scope.Truncated)
	if err != nil {
		t.Fatalf("scan the grading of comparison %d: %v", comparisonID, err)
	}
	perRun := func(where string) map[int64]int64 {
		rows, err := st.Pool().Query(ctx, `SELECT s.run_id, count(*) FROM samples s JOIN runs r ON r.id = s.run_id
			WHERE r.comparison_id = $1`+where+` GROUP BY s.run_id`, comparisonID)
		if err != nil {
			t.Fatalf("scan the samples of comparison %d: %v", comparisonID, err)
		}
		defer rows.Close()
		out := map[int64]int64{}
		for rows.Next() {
			var run, n int64
			if err := rows.Scan(&run, &n); err != nil {
				t.Fatal(err)
			}
			out[run] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	return scope, perRun(` AND s.file_correct IS NOT NULL AND s.override_at IS NULL AND s.verdict_source <> 'file'`), perRun(``)
}

// CheckGrading fails t when the grading counts stored per run differ from
// ScannedGrading's; when says at which step.
func CheckGrading(t testing.TB, st *store.Store, comparisonID int64, when string) store.PolicyScope {
	t.Helper()
	ctx := context.Background()
	wantScope, wantReplaced, wantTotals := ScannedGrading(t, st, comparisonID)
	scope, err := st.PolicyScopeOf(ctx, comparisonID)
	if err != nil {
		t.Fatal(err)
	}
	replaced, err := st.FileVerdictsReplaced(ctx, comparisonID)
	if err != nil {
		t.Fatal(err)
	}
	totals, err := st.SampleTotals(ctx, comparisonID)
	if err != nil {
		t.Fatal(err)
	}
	if scope != wantScope {
		t.Errorf("%s: policy scope %+v; scanning the samples gives %+v", when, scope, wantScope)
	}
	if !maps.Equal(replaced, wantReplaced) {
		t.Errorf("%s: replaced file verdicts per run %v; scanning the samples gives %v", when, replaced, wantReplaced)
	}
	if !maps.Equal(totals, wantTotals) {
		t.Errorf("%s: samples per run %v; scanning the samples gives %v", when, totals, wantTotals)
	}
	return wantScope
}

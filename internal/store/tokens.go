package store

import (
	"context"
	"fmt"
)

// TokenSum is one run's completion tokens on one problem, as AggregateRun
// stored them with the run's counts: of Samples samples, TokenSamples carry
// a token count and Tokens is the sum of those counts (completion tokens).
// A sample without a count is stored with completion_tokens 0 (the file or
// the endpoint gave none), so it adds to neither TokenSamples nor Tokens:
// "unknown" never reads as 0 tokens.
type TokenSum struct {
	RunID        int64
	ProblemID    int64
	Samples      int
	TokenSamples int
	Tokens       int64
}

// TokenSums returns every run's per-problem token sums of a comparison,
// keyed by run id, in one query of the counts table (no sample is read:
// AggregateRun summed them). Only problems with at least one token count
// are returned: a problem without one (every problem of a run imported as
// counts) is its counts' n samples without tokens, which callers fill in
// (at a million problems the rows without tokens were 650 MB to read).
func (s *Store) TokenSums(ctx context.Context, comparisonID int64) (map[int64][]TokenSum, error) {
	rows, err := s.db.Query(ctx, `SELECT rc.run_id, rc.problem_id, rc.n, rc.token_samples, rc.tokens FROM run_counts rc
		JOIN runs r ON r.id = rc.run_id WHERE r.comparison_id = $1 AND rc.token_samples > 0 ORDER BY rc.run_id, rc.problem_id`, comparisonID)
	if err != nil {
		return nil, fmt.Errorf("token sums of comparison %d: %w", comparisonID, err)
	}
	defer rows.Close()
	out := map[int64][]TokenSum{}
	var x TokenSum
	for rows.Next() {
		if err := rows.Scan(&x.RunID, &x.ProblemID, &x.Samples, &x.TokenSamples, &x.Tokens); err != nil {
			return nil, fmt.Errorf("token sums of comparison %d: %w", comparisonID, err)
		}
		out[x.RunID] = append(out[x.RunID], x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("token sums of comparison %d: %w", comparisonID, err)
	}
	return out, nil
}

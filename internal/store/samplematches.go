package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// SampleMatches says which samples of one problem in one run contain a
// text: what a problem page opened from a search in completions shows.
type SampleMatches struct {
	RunID   int64
	Indexes []int // the first matching sample indexes, ascending (at most the limit asked)
	Total   int   // every matching sample of the problem in the run
}

// SamplesContaining returns, for each of runs in order, the samples of
// problem problemID whose completion contains text as SearchTexts matches
// it (case-insensitive and literal: ILIKE with %, _ and \ escaped): the
// first limit sample indexes and how many match in all. It reads every
// sample of the problem in those runs (their partitions only: each run is
// named literally), about 20 µs a 2.7 KB text, so a caller names the runs
// it shows. An empty text matches nothing.
func (s *Store) SamplesContaining(ctx context.Context, runs []int64, problemID int64, text string, limit int) ([]SampleMatches, error) {
	out := make([]SampleMatches, len(runs))
	if text == "" {
		for i, r := range runs {
			out[i].RunID = r
		}
		return out, nil
	}
	pattern := "%" + likeEscaper.Replace(text) + "%"
	for i, r := range runs {
		rows, err := s.db.Query(ctx, `SELECT sample_index FROM samples WHERE run_id = `+strconv.FormatInt(r, 10)+`
			AND problem_id = $1 AND completion ILIKE $2 ORDER BY sample_index`, problemID, pattern)
		if err != nil {
			return nil, fmt.Errorf("samples of problem %d in run %d containing the query: %w", problemID, r, err)
		}
		idx, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil {
			return nil, fmt.Errorf("samples of problem %d in run %d containing the query: %w", problemID, r, err)
		}
		out[i] = SampleMatches{RunID: r, Indexes: idx[:min(len(idx), limit)], Total: len(idx)}
	}
	return out, nil
}

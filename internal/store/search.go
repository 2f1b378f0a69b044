package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// SearchConfig is the text search configuration of problem and completion
// search. It must stay equal to the one in the problems_statement_fts
// index's expression (migration 00080), or statement search stops using it.
const SearchConfig = "english"

// SearchStatements returns the ids of a dataset's problems whose statement
// matches query, a web-search style query ("quoted phrase", -not, or),
// with English stemming. An empty or stop-word-only query matches nothing.
// It uses the problems_statement_fts GIN index.
func (s *Store) SearchStatements(ctx context.Context, datasetID int64, query string) (map[int64]bool, error) {
	rows, err := s.db.Query(ctx, `SELECT id FROM problems
		WHERE dataset_id = $1 AND to_tsvector('english'::regconfig, statement) @@ websearch_to_tsquery('english'::regconfig, $2)`,
		datasetID, query)
	if err != nil {
		return nil, fmt.Errorf("search statements of dataset %d: %w", datasetID, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("search statements of dataset %d: %w", datasetID, err)
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// likeEscaper makes text a literal LIKE pattern (backslash is the default
// escape character).
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// SampleFacets says, per problem, which finish reasons and which extracted
// answers the samples of some runs have: the problem table filters by them.
type SampleFacets struct {
	// Finish maps a finish reason ("" when the file recorded none) to the
	// problems with at least one sample that ended so.
	Finish map[string]map[int64]bool
	// Answers maps an answer (AnswerSQL; "" for none) to the problems
	// with at least one sample that gave it.
	Answers map[string]map[int64]bool
}

// SampleFacetsFor reads the finish reasons and extracted answers of every
// sample of runIDs in one scan (a few seconds at millions of samples:
// callers keep the result as long as the samples do not change).
func (s *Store) SampleFacetsFor(ctx context.Context, runIDs []int64) (SampleFacets, error) {
	f := SampleFacets{Finish: map[string]map[int64]bool{}, Answers: map[string]map[int64]bool{}}
	if len(runIDs) == 0 {
		return f, nil
	}
	rows, err := s.db.Query(ctx, `SELECT problem_id, finish_reason, `+AnswerSQL+` FROM samples
		WHERE run_id = ANY($1) GROUP BY 1, 2, 3`, runIDs)
	if err != nil {
		return f, fmt.Errorf("finish reasons and answers: %w", err)
	}
	defer rows.Close()
	add := func(m map[string]map[int64]bool, k string, id int64) {
		set := m[k]
		if set == nil {
			set = map[int64]bool{}
			m[k] = set
		}
		set[id] = true
	}
	for rows.Next() {
		var id int64
		var finish, answer string
		if err := rows.Scan(&id, &finish, &answer); err != nil {
			return f, fmt.Errorf("finish reasons and answers: %w", err)
		}
		add(f.Finish, finish, id)
		add(f.Answers, answer, id)
	}
	if err := rows.Err(); err != nil {
		return f, fmt.Errorf("finish reasons and answers: %w", err)
	}
	return f, nil
}

// StatementPreviews returns the first chars characters of each problem's
// statement, on one line (runs of white space as one space).
func (s *Store) StatementPreviews(ctx context.Context, ids []int64, chars int) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.Query(ctx, `SELECT id, left(statement, $2) FROM problems WHERE id = ANY($1)`, ids, chars)
	if err != nil {
		return nil, fmt.Errorf("statement previews: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var text string
		if err := rows.Scan(&id, &text); err != nil {
			return nil, fmt.Errorf("statement previews: %w", err)
		}
		out[id] = strings.Join(strings.Fields(text), " ")
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("statement previews: %w", err)
	}
	return out, nil
}

// AnswerSQL is a sample's final answer as pages show and group it: the
// one Reach's verifier extracted, else the one the uploaded file carried,
// without surrounding white space.
const AnswerSQL = "btrim(CASE WHEN extracted <> '' THEN extracted ELSE file_extracted END)"

// Answer is the sample's final answer as AnswerSQL gives it.
func (x Sample) Answer() string {
	if x.Extracted != "" {
		return strings.TrimSpace(x.Extracted)
	}
	return strings.TrimSpace(x.FileExtracted)
}

// AnswerCount is how many of one run's samples on a problem gave one
// answer, how many of those were graded correct, and how many of the
// correct ones the comparison's grading policy does not count, by why.
type AnswerCount struct {
	RunID     int64
	Answer    string // AnswerSQL; "" for none
	N         int
	Correct   int
	Fallback  int // correct, not counted: UncountedFallback
	Truncated int // correct, not counted: UncountedLength
}

// AnswerCounts groups the samples of a comparison's runs on one problem by
// answer, as of the runs' last aggregation (AggregateRun, which every
// change of verdicts ends with): a few rows of run_answers, whatever n.
func (s *Store) AnswerCounts(ctx context.Context, comparisonID, problemID int64) ([]AnswerCount, error) {
	var out []AnswerCount
	err := s.Batch(ctx, s.AnswerCountsInto(comparisonID, problemID, &out))
	return out, err
}

// AnswerCountsInto queues AnswerCounts' query with out as the result.
func (s *Store) AnswerCountsInto(comparisonID, problemID int64, out *[]AnswerCount) Queued {
	return func(b *pgx.Batch) {
		b.Queue(`SELECT a.run_id, a.answer, a.n, a.correct, a.fallback, a.truncated
			FROM run_answers a JOIN runs r ON r.id = a.run_id WHERE r.comparison_id = $1 AND a.problem_id = $2`, comparisonID, problemID).
			Query(func(rows pgx.Rows) error {
				var err error
				*out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (AnswerCount, error) {
					var a AnswerCount
					return a, row.Scan(&a.RunID, &a.Answer, &a.N, &a.Correct, &a.Fallback, &a.Truncated)
				})
				if err != nil {
					return fmt.Errorf("answers on problem %d: %w", problemID, err)
				}
				return nil
			})
	}
}

package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"
)

// The search in completion texts uses one partial GIN trigram index
// (pg_trgm, gin_trgm_ops) per run with texts, named SearchIndexName(run):
// built after the run's comparison is ready (BuildSearchIndex, by a job),
// so that imports COPY into a table without it, and dropped when the run
// is gone (DropOrphanSearchIndexes).

const searchIndexPrefix = "samples_trgm_run_"

// SearchIndexName is the name of run runID's trigram index.
func SearchIndexName(runID int64) string { return searchIndexPrefix + strconv.FormatInt(runID, 10) }

// Trigrammable reports whether a search for text can use the trigram
// index: pg_trgm takes trigrams only from runs of at least 3 letters or
// digits ("wait," and "\boxed{" can; "重新", "a+b" and "17" cannot).
// Other queries read the samples themselves.
func Trigrammable(text string) bool {
	run := 0
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			run++
			if run >= 3 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// SearchIndexedRuns returns which of runIDs have a trigram index ready to
// use (built and valid; one being built or left invalid by a failed build
// is not).
func (s *Store) SearchIndexedRuns(ctx context.Context, runIDs []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	if len(runIDs) == 0 {
		return out, nil
	}
	names := make([]string, len(runIDs))
	for i, id := range runIDs {
		names[i] = SearchIndexName(id)
	}
	rows, err := s.db.Query(ctx, `SELECT c.relname FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
		WHERE c.relname = ANY($1) AND c.relnamespace = 'public'::regnamespace AND i.indisvalid AND i.indisready`, names)
	if err != nil {
		return nil, fmt.Errorf("search indexes: %w", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("search indexes: %w", err)
	}
	for _, n := range got {
		id, err := strconv.ParseInt(strings.TrimPrefix(n, searchIndexPrefix), 10, 64)
		if err == nil {
			out[id] = true
		}
	}
	return out, nil
}

// BuildSearchIndex builds run runID's trigram index unless it is there
// already; built reports whether this call built it. It uses CREATE INDEX
// CONCURRENTLY (imports into other runs go on meanwhile; it waits for the
// transactions open as it starts), so it runs on the pool, never in a
// transaction; an invalid index a failed build left is dropped first.
func (s *Store) BuildSearchIndex(ctx context.Context, runID int64) (built bool, err error) {
	if s.tx != nil {
		return false, errors.New("build search index: not in a transaction")
	}
	name := SearchIndexName(runID)
	var valid *bool
	err = s.pool.QueryRow(ctx, `SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
		WHERE c.relname = $1 AND c.relnamespace = 'public'::regnamespace`, name).Scan(&valid)
	switch {
	case err == nil && *valid:
		return false, nil
	case err == nil:
		if _, err := s.pool.Exec(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+name); err != nil {
			return false, fmt.Errorf("drop invalid search index of run %d: %w", runID, err)
		}
	case !errors.Is(err, pgx.ErrNoRows):
		return false, fmt.Errorf("search index of run %d: %w", runID, err)
	}
	// The run id is a literal: the planner uses a partial index only for
	// queries whose own literal run id implies its predicate.
	if _, err := s.pool.Exec(ctx, `CREATE INDEX CONCURRENTLY IF NOT EXISTS `+name+
		` ON samples USING gin (completion gin_trgm_ops) WHERE run_id = `+strconv.FormatInt(runID, 10)); err != nil {
		return false, fmt.Errorf("build search index of run %d: %w", runID, err)
	}
	return true, nil
}

// RunsNeedingSearchIndex returns up to limit runs with completion texts of
// ready comparisons (of comparisonID only, unless it is 0) that have no
// trigram index, or an invalid one.
func (s *Store) RunsNeedingSearchIndex(ctx context.Context, comparisonID int64, limit int) ([]int64, error) {
	rows, err := s.db.Query(ctx, `SELECT r.id FROM runs r JOIN comparisons c ON c.id = r.comparison_id
		WHERE r.has_texts AND c.status = 'ready' AND ($1 = 0 OR c.id = $1)
		  AND NOT EXISTS (SELECT 1 FROM pg_class x JOIN pg_index i ON i.indexrelid = x.oid
		                  WHERE x.relname = 'samples_trgm_run_' || r.id AND i.indisvalid)
		ORDER BY r.id LIMIT $2`, comparisonID, limit)
	if err != nil {
		return nil, fmt.Errorf("runs needing a search index: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("runs needing a search index: %w", err)
	}
	return ids, nil
}

// DropOrphanSearchIndexes drops the trigram indexes of runs that no longer
// exist (a deleted comparison, a model taken out) with DROP INDEX
// CONCURRENTLY, on the pool, and returns how many it dropped.
func (s *Store) DropOrphanSearchIndexes(ctx context.Context) (int, error) {
	if s.tx != nil {
		return 0, errors.New("drop search indexes: not in a transaction")
	}
	rows, err := s.pool.Query(ctx, `SELECT c.relname FROM pg_class c
		WHERE c.relkind = 'i' AND c.relnamespace = 'public'::regnamespace AND c.relname LIKE 'samples\_trgm\_run\_%'
		  AND NOT EXISTS (SELECT 1 FROM runs r WHERE 'samples_trgm_run_' || r.id = c.relname)`)
	if err != nil {
		return 0, fmt.Errorf("orphan search indexes: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("orphan search indexes: %w", err)
	}
	for _, n := range names {
		if _, err := s.pool.Exec(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+pgx.Identifier{n}.Sanitize()); err != nil {
			return 0, fmt.Errorf("drop search index %s: %w", n, err)
		}
	}
	return len(names), nil
}

// searchIndexedSQL is the query SearchCompletionsIndexed runs for one run:
// its run id a literal, so that the planner can prove the partial index's
// predicate.
func searchIndexedSQL(runID int64) string {
	return `SELECT DISTINCT problem_id FROM samples WHERE run_id = ` + strconv.FormatInt(runID, 10) + ` AND completion ILIKE $1`
}

// SearchCompletionsIndexed returns the problems on which one of runIDs has
// a completion that contains text, case-insensitive and literally as
// SearchCompletions, over all of the runs' samples. Runs with a trigram
// index (SearchIndexedRuns) and a Trigrammable text read only the index's
// candidates; others would be scanned whole, so callers use
// SearchCompletions, bounded, for them. Each query is planned with its
// pattern (an unnamed statement, never a generic plan).
func (s *Store) SearchCompletionsIndexed(ctx context.Context, runIDs []int64, text string) (map[int64]bool, error) {
	out := map[int64]bool{}
	if text == "" {
		return out, nil
	}
	pattern := "%" + likeEscaper.Replace(text) + "%"
	for _, run := range runIDs {
		rows, err := s.db.Query(ctx, searchIndexedSQL(run), pgx.QueryExecModeExec, pattern)
		if err != nil {
			return nil, fmt.Errorf("search completions of run %d: %w", run, err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return nil, fmt.Errorf("search completions of run %d: %w", run, err)
		}
		for _, id := range ids {
			out[id] = true
		}
	}
	return out, nil
}

// ExplainSearchIndexed is Postgres's plan (EXPLAIN, text) of
// SearchCompletionsIndexed's query for one run and text: tests check that
// it reads the run's index.
func (s *Store) ExplainSearchIndexed(ctx context.Context, runID int64, text string) (string, error) {
	rows, err := s.db.Query(ctx, `EXPLAIN `+searchIndexedSQL(runID), pgx.QueryExecModeExec, "%"+likeEscaper.Replace(text)+"%")
	if err != nil {
		return "", fmt.Errorf("explain search: %w", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", fmt.Errorf("explain search: %w", err)
	}
	return strings.Join(lines, "\n"), nil
}

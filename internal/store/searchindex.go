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

// The search in completion texts uses one GIN trigram index (pg_trgm,
// gin_trgm_ops) per run with texts, named SearchIndexName(run), on
// reach_search_text(completion) (migration 00177: lower-cased, spaces
// replaced by a letter, so that trigrams span them) of the run's partition
// of samples (a partial index of samples_legacy for runs from before
// migration 00182). It is built after the run's comparison is ready
// (BuildSearchIndex, by a job), so that imports COPY into a table without
// it, and goes with the partition when the run is gone
// (DropOrphanSamplePartitions; DropOrphanSearchIndexes for samples_legacy).

const searchIndexPrefix = "samples_search_run_"

// SearchIndexName is the name of run runID's trigram index.
func SearchIndexName(runID int64) string { return searchIndexPrefix + strconv.FormatInt(runID, 10) }

// Trigrammable reports whether a search for text can use the search
// index: pg_trgm takes trigrams from runs of at least 3 letters or digits,
// and reach_search_text makes a space a letter ("wait,", "\boxed{" and
// "is 2" can; "17", "a+b", "重新" and "x≤2" cannot).
// Other queries read the samples themselves.
func Trigrammable(text string) bool {
	run := 0
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == ' ' {
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
		// A build stopped between its CREATE and its ALTER left the
		// statistics on: set them off again (cheap, idempotent).
		if _, err := s.pool.Exec(ctx, noSearchStats(name)); err != nil {
			return false, fmt.Errorf("search index of run %d: %w", runID, err)
		}
		return false, nil
	case err == nil:
		if _, err := s.pool.Exec(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+name); err != nil {
			return false, fmt.Errorf("drop invalid search index of run %d: %w", runID, err)
		}
	case !errors.Is(err, pgx.ErrNoRows):
		return false, fmt.Errorf("search index of run %d: %w", runID, err)
	}
	// A run with its own partition gets an index of that partition (the
	// build reads that run only). A run in samples_legacy gets a partial
	// index there; its run id is a literal: the planner uses a partial
	// index only for queries whose own literal run id implies its predicate.
	own, err := s.ownPartition(ctx, runID)
	if err != nil {
		return false, err
	}
	on := SamplePartition(runID)
	where := ""
	if !own {
		on, where = legacySamples, ` WHERE run_id = `+strconv.FormatInt(runID, 10)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return false, fmt.Errorf("build search index of run %d: %w", runID, err)
	}
	defer func() {
		// The setting is the session's: reset it before the connection
		// goes back to the pool, or close it.
		if _, err := conn.Exec(context.Background(), `RESET maintenance_work_mem`); err != nil {
			conn.Conn().Close(context.Background())
		}
		conn.Release()
	}()
	if _, err := conn.Exec(ctx, `SET maintenance_work_mem = '`+SearchIndexMemory+`'`); err != nil {
		return false, fmt.Errorf("build search index of run %d: %w", runID, err)
	}
	if _, err := conn.Exec(ctx, `CREATE INDEX CONCURRENTLY IF NOT EXISTS `+name+
		` ON `+on+` USING gin (reach_search_text(completion) gin_trgm_ops)`+where); err != nil {
		return false, fmt.Errorf("build search index of run %d: %w", runID, err)
	}
	if _, err := conn.Exec(ctx, noSearchStats(name)); err != nil {
		return false, fmt.Errorf("build search index of run %d: %w", runID, err)
	}
	return true, nil
}

// noSearchStats is the statement that keeps ANALYZE from gathering
// statistics of search index name's expression. With them the planner
// knows how many texts a common query matches but not what
// reach_search_text costs (an inlined lower() and replace(), priced as two
// operators, 40-170 µs a text in fact), and reads the whole run instead
// of the index's candidates: `the final answer is` on a 128,000-sample run
// of the lab took 5.0 s by a sequential scan against 0.85 s through the
// index (EXPLAIN ANALYZE, 2026-12-05). Without them the planner takes the
// index for any query, which at worst (a query in nearly every text) costs
// about what the scan would.
func noSearchStats(name string) string {
	return `ALTER INDEX ` + name + ` ALTER COLUMN 1 SET STATISTICS 0`
}

// SearchIndexMemory is the maintenance_work_mem of a search index build: a
// GIN build gathers its entries in it and writes them out each time it is
// full. On 20,000 real 2.7 KB texts (load 6–9) the build took 12.3 s with
// Postgres' default 64 MB, 10.0 s with 256 MB and 9.2 s with 1 GB. One
// build runs at a time per process (jobs.SearchIndexQueue).
const SearchIndexMemory = "256MB"

// RunsNeedingSearchIndex returns up to limit runs with completion texts of
// ready comparisons (of comparisonID only, unless it is 0) that have no
// trigram index, or an invalid one.
func (s *Store) RunsNeedingSearchIndex(ctx context.Context, comparisonID int64, limit int) ([]int64, error) {
	rows, err := s.db.Query(ctx, `SELECT r.id FROM runs r JOIN comparisons c ON c.id = r.comparison_id
		WHERE r.has_texts AND c.status = 'ready' AND ($1 = 0 OR c.id = $1)
		  AND NOT EXISTS (SELECT 1 FROM pg_class x JOIN pg_index i ON i.indexrelid = x.oid
		                  WHERE x.relname = 'samples_search_run_' || r.id AND i.indisvalid)
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
// exist (a deleted comparison, a model taken out) and those of the old
// form (samples_trgm_run_<id>, replaced by SearchIndexName's) with DROP
// INDEX CONCURRENTLY, on the pool, and returns how many it dropped.
func (s *Store) DropOrphanSearchIndexes(ctx context.Context) (int, error) {
	if s.tx != nil {
		return 0, errors.New("drop search indexes: not in a transaction")
	}
	rows, err := s.pool.Query(ctx, `SELECT c.relname FROM pg_class c
		WHERE c.relkind = 'i' AND c.relnamespace = 'public'::regnamespace
		  AND (c.relname LIKE 'samples\_trgm\_run\_%' OR c.relname LIKE 'samples\_search\_run\_%'
		       AND NOT EXISTS (SELECT 1 FROM runs r WHERE 'samples_search_run_' || r.id = c.relname))`)
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

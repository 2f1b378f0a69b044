-- +goose Up
-- Full-text search in problem statements (the comparison page's problem table). The expression
-- must match store.SearchStatements' exactly. Completions have no such index: at millions of
-- samples it would slow every import; their search is bounded by the problems it covers.
CREATE INDEX problems_statement_fts ON problems USING gin (to_tsvector('english'::regconfig, statement));

-- +goose Down
DROP INDEX problems_statement_fts;

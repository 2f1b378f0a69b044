-- +goose Up
-- Trigram matching (pg_trgm, shipped with the official postgres image) for
-- the search in completion texts: each run with texts gets its own partial
-- GIN index (samples_trgm_run_<id>), built by a SearchIndexJob after its
-- comparison is ready, never here: an index on the whole table would slow
-- every import's COPY.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- +goose Down
DROP EXTENSION IF EXISTS pg_trgm;

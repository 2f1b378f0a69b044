-- +goose Up
-- The comparison page says how many of a model's verdicts a reviewer overrode ("file, 1 override").
-- Only overridden samples are in this index: imports, which never set override_from, only test
-- the predicate, and counting a run's overrides reads a handful of entries, not its samples.
CREATE INDEX samples_overridden ON samples (run_id) WHERE override_from IS NOT NULL;

-- +goose Down
DROP INDEX samples_overridden;

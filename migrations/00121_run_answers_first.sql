-- +goose Up
-- The first sample (by index) of each answer group that is graded correct,
-- and of those that are not: with them the statistics job reads a run's
-- answers in sample order from these few rows (maj@k and answer diversity
-- group answers in order of first appearance) instead of scanning every
-- sample (5.3 of 11 s at 6 models × 500 × 1,024). Rows aggregated before
-- this migration have neither; the job scans those runs' samples as before.
ALTER TABLE run_answers ADD COLUMN first_correct int, ADD COLUMN first_wrong int;

-- +goose Down
ALTER TABLE run_answers DROP COLUMN first_correct, DROP COLUMN first_wrong;

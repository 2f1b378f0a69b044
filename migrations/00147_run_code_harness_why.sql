-- +goose Up
-- Why a run's code harness is what it is, when Reach chose it (a file's
-- completions tried under every harness; jobs.chooseHarness): one sentence
-- for the comparison page and the report. '' when a person named the
-- harness or nothing was chosen.
ALTER TABLE runs ADD COLUMN code_harness_why text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN code_harness_why;

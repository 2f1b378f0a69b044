-- +goose Up
-- How many of a run's verdicts differ from the labels its file carried,
-- after Reach's verifier graded them (shown after a re-verification).
ALTER TABLE runs ADD COLUMN verdicts_changed bigint;

-- +goose Down
ALTER TABLE runs DROP COLUMN verdicts_changed;

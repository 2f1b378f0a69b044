-- +goose Up
-- One samples file whose records carry the training step (issue 23.1) is
-- imported once as one checkpoint per step: the run holding the file reads
-- it and stores each sample in its step's run; the other steps' runs name it
-- here and have no file of their own.
ALTER TABLE runs ADD COLUMN split_of bigint REFERENCES runs (id) ON DELETE SET NULL;
CREATE INDEX runs_split_of ON runs (split_of) WHERE split_of IS NOT NULL;

-- +goose Down
ALTER TABLE runs DROP COLUMN split_of;

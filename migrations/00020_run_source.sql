-- +goose Up
-- What the tool that wrote a run's samples file recorded about the run
-- (ingest.RunMeta: tool, version, model, task, date, sampling settings), and
-- what the import changed or doubted without failing ({"count": N,
-- "examples": ["file:12: ..."]}, e.g. NUL characters removed). Shown on the
-- comparison page and in the report JSON.
ALTER TABLE runs ADD COLUMN tool_meta jsonb;
ALTER TABLE runs ADD COLUMN import_warnings jsonb;

-- +goose Down
ALTER TABLE runs DROP COLUMN import_warnings;
ALTER TABLE runs DROP COLUMN tool_meta;

-- +goose Up
-- A comparison following a server folder of a training run from the browser
-- (issue 23.2): a job looks at the folder every interval and adds each
-- complete step file as a checkpoint of model_name. state is what the last
-- look saw (each file's size and time, and since when), so that a file still
-- being written is not read half; stopped_at set means it no longer looks
-- (what went in stays).
CREATE TABLE follows (
    id            bigserial PRIMARY KEY,
    comparison_id bigint NOT NULL REFERENCES comparisons (id) ON DELETE CASCADE,
    model_name    text   NOT NULL,
    path          text   NOT NULL,
    every_ms      int    NOT NULL CHECK (every_ms > 0),
    state         jsonb  NOT NULL DEFAULT '{}',
    started_by    bigint REFERENCES users (id) ON DELETE SET NULL,
    started_at    timestamptz NOT NULL DEFAULT now(),
    last_scan_at  timestamptz,
    last_error    text   NOT NULL DEFAULT '',
    stopped_at    timestamptz
);
-- One folder followed at a time per comparison.
CREATE UNIQUE INDEX follows_active ON follows (comparison_id) WHERE stopped_at IS NULL;

-- +goose Down
DROP TABLE follows;

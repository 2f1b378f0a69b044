-- +goose Up
-- Cached background statistics of a comparison (bootstrap intervals, maj@k), one row per report
-- variant ("all", "unguessable"). hash identifies the problems and counts they were computed
-- from: a row whose hash differs from the current counts' is stale and gets recomputed.
CREATE TABLE comparison_stats (
    comparison_id bigint NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
    variant       text   NOT NULL,
    hash          text   NOT NULL,
    status        text   NOT NULL DEFAULT 'ready', -- ready | failed
    error         text   NOT NULL DEFAULT '',
    data          jsonb  NOT NULL DEFAULT '{}',
    computed_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (comparison_id, variant)
);

-- +goose Down
DROP TABLE comparison_stats;

-- +goose Up
-- Heartbeats of running River jobs. A worker renews its job's lease every few
-- seconds; a job that is running in River but whose lease went stale belongs
-- to a dead worker, and the reaper hands its work to a new job. Unlogged:
-- written often, worthless after a crash (River's own rescue covers that).
CREATE UNLOGGED TABLE job_leases (
    job_id     bigint PRIMARY KEY,            -- river_job.id
    kind       text   NOT NULL,
    holder     text   NOT NULL,               -- host:pid of the worker
    started_at timestamptz NOT NULL DEFAULT now(),
    renewed_at timestamptz NOT NULL DEFAULT now()
);

-- The grading policy of a comparison: strict counts only answers the
-- completion marked as final (and never a completion cut by the length
-- limit); lenient also counts the Qwen2.5-Math evaluator's fallback to the
-- last number or math span. Counts (run_counts.c) follow it.
ALTER TABLE comparisons ADD COLUMN grading_policy text NOT NULL DEFAULT 'strict'
    CHECK (grading_policy IN ('strict', 'lenient'));

-- The seed each sampled completion was requested with (seeded sampling).
ALTER TABLE samples ADD COLUMN seed bigint;

-- Upload chunks may be stored compressed.
ALTER TABLE uploads ADD COLUMN codec text NOT NULL DEFAULT '';
ALTER TABLE upload_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

-- The comparison whose dataset upload created a dataset: a failed import
-- deletes what it created.
ALTER TABLE datasets ADD COLUMN origin_comparison_id bigint;

-- +goose Down
ALTER TABLE datasets DROP COLUMN origin_comparison_id;
ALTER TABLE upload_chunks ALTER COLUMN data SET STORAGE EXTENDED;
ALTER TABLE uploads DROP COLUMN codec;
ALTER TABLE samples DROP COLUMN seed;
ALTER TABLE comparisons DROP COLUMN grading_policy;
DROP TABLE job_leases;

-- +goose Up
-- Endpoint-backed runs: Reach draws the samples itself from an
-- OpenAI-compatible server.
ALTER TABLE runs
    ADD COLUMN endpoint_url     text NOT NULL DEFAULT '',
    ADD COLUMN endpoint_model   text NOT NULL DEFAULT '',
    ADD COLUMN endpoint_style   text NOT NULL DEFAULT '',   -- completions | chat
    ADD COLUMN api_key_enc      bytea,                      -- AES-GCM with the server secret; never shown back
    ADD COLUMN max_concurrency  int  NOT NULL DEFAULT 16,
    ADD COLUMN sampling_override jsonb,                     -- per-model overrides of the comparison's config
    ADD COLUMN tokens_in        bigint NOT NULL DEFAULT 0,
    ADD COLUMN tokens_out       bigint NOT NULL DEFAULT 0,
    ADD COLUMN requests         bigint NOT NULL DEFAULT 0,
    ADD COLUMN errors           jsonb  NOT NULL DEFAULT '{}', -- failed attempts by kind
    ADD COLUMN sampling_started_at timestamptz;

ALTER TABLE comparisons
    ADD COLUMN sampling      jsonb,               -- sampling config (n, temperature, top_p, ..., template); null for imports
    ADD COLUMN auto_start    bool NOT NULL DEFAULT false;

-- A chunk of sample indices [first_index, first_index + count) of one run on
-- one problem: one SampleJob. Samples themselves are unique by (run,
-- problem, index), so a retried chunk only draws what is missing.
CREATE TABLE sample_chunks (
    run_id      bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    problem_id  bigint NOT NULL REFERENCES problems(id) ON DELETE CASCADE,
    first_index int    NOT NULL,
    count       int    NOT NULL CHECK (count >= 1),
    status      text   NOT NULL DEFAULT 'pending', -- pending | done | failed
    error       text   NOT NULL DEFAULT '',
    error_kind  text   NOT NULL DEFAULT '',
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, problem_id, first_index)
);
CREATE INDEX sample_chunks_open ON sample_chunks (run_id) WHERE status = 'pending';

-- +goose Down
DROP TABLE sample_chunks;
ALTER TABLE comparisons DROP COLUMN sampling, DROP COLUMN auto_start;
ALTER TABLE runs DROP COLUMN endpoint_url, DROP COLUMN endpoint_model, DROP COLUMN endpoint_style, DROP COLUMN api_key_enc,
    DROP COLUMN max_concurrency, DROP COLUMN sampling_override, DROP COLUMN tokens_in, DROP COLUMN tokens_out,
    DROP COLUMN requests, DROP COLUMN errors, DROP COLUMN sampling_started_at;

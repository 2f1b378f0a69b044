-- +goose Up
CREATE TABLE datasets (
    id            bigserial PRIMARY KEY,
    name          text NOT NULL,
    source_file   text NOT NULL DEFAULT '',
    problem_count int  NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE problems (
    id         bigserial PRIMARY KEY,
    dataset_id bigint NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    idx        int    NOT NULL,           -- 0-based line in the dataset file
    key        text   NOT NULL,           -- unique_id / id / qid / task_id, or idx as text
    statement  text   NOT NULL,
    reference  text   NOT NULL DEFAULT '',
    subject    text   NOT NULL DEFAULT '',
    level      text   NOT NULL DEFAULT '',
    kind       text   NOT NULL DEFAULT 'math',
    extra      jsonb  NOT NULL DEFAULT '{}',
    UNIQUE (dataset_id, idx),
    UNIQUE (dataset_id, key)
);

CREATE TABLE comparisons (
    id          bigserial PRIMARY KEY,
    name        text   NOT NULL,
    dataset_id  bigint REFERENCES datasets(id),
    status      text   NOT NULL DEFAULT 'pending', -- pending | importing | verifying | ready | failed
    error       text   NOT NULL DEFAULT '',
    source_note text   NOT NULL DEFAULT '',        -- where the data comes from, shown on the page
    reverify    bool   NOT NULL DEFAULT false,     -- ignore file verdicts, use Reach's verifier
    dataset_upload_id bigint,                      -- dataset file, while it is being imported
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- One model's samples on the comparison's dataset.
CREATE TABLE runs (
    id            bigserial PRIMARY KEY,
    comparison_id bigint NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
    position      int    NOT NULL,               -- 0 = base model
    model_name    text   NOT NULL,
    role          text   NOT NULL,               -- base | rl | checkpoint | distilled
    step          int,                           -- training step for checkpoints
    upload_id     bigint,                        -- samples file, while it is being imported
    source_file   text   NOT NULL DEFAULT '',
    format        text   NOT NULL DEFAULT '',
    mapping       jsonb,
    has_texts     bool   NOT NULL DEFAULT false, -- false for counts-only imports
    verdict_source text  NOT NULL DEFAULT '',    -- "file" or the verifier name
    status        text   NOT NULL DEFAULT 'pending', -- pending | importing | verifying | aggregating | ready | failed
    error         text   NOT NULL DEFAULT '',
    UNIQUE (comparison_id, position),
    UNIQUE (comparison_id, model_name)
);

CREATE TABLE samples (
    run_id            bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    problem_id        bigint NOT NULL REFERENCES problems(id) ON DELETE CASCADE,
    sample_index      int    NOT NULL,
    completion        text   NOT NULL,
    finish_reason     text   NOT NULL DEFAULT '',
    completion_tokens int    NOT NULL DEFAULT 0,
    file_correct      bool,                       -- the verdict the uploaded file carried
    file_extracted    text   NOT NULL DEFAULT '',
    status            text   NOT NULL DEFAULT 'pending', -- pending | correct | incorrect | unparseable
    extracted         text   NOT NULL DEFAULT '',
    rule              text   NOT NULL DEFAULT '',
    reason            text   NOT NULL DEFAULT '',
    verdict_source    text   NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, problem_id, sample_index)
);
CREATE INDEX samples_pending ON samples (run_id) WHERE status = 'pending';

-- Per run and problem: n samples, c correct. Everything on the charts derives from these.
CREATE TABLE run_counts (
    run_id     bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    problem_id bigint NOT NULL REFERENCES problems(id) ON DELETE CASCADE,
    n          int NOT NULL CHECK (n >= 1),
    c          int NOT NULL CHECK (c >= 0 AND c <= n),
    PRIMARY KEY (run_id, problem_id)
);

-- Live progress of each stage of each run (import, verify, aggregate).
CREATE TABLE run_progress (
    run_id     bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    stage      text   NOT NULL,
    done       bigint NOT NULL DEFAULT 0,
    total      bigint NOT NULL DEFAULT 0,
    unit       text   NOT NULL DEFAULT '',
    detail     text   NOT NULL DEFAULT '',        -- e.g. "12,000 samples"
    status     text   NOT NULL DEFAULT 'queued', -- queued | running | done | failed
    error      text   NOT NULL DEFAULT '',
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, stage)
);

-- Uploaded files, streamed into chunks so any worker on any machine can read them.
CREATE TABLE uploads (
    id         bigserial PRIMARY KEY,
    filename   text   NOT NULL,
    size       bigint NOT NULL DEFAULT 0,
    complete   bool   NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE upload_chunks (
    upload_id bigint NOT NULL REFERENCES uploads(id) ON DELETE CASCADE,
    seq       int    NOT NULL,
    data      bytea  NOT NULL,
    PRIMARY KEY (upload_id, seq)
);

-- +goose Down
DROP TABLE upload_chunks, uploads, run_progress, run_counts, samples, runs, comparisons, problems, datasets;

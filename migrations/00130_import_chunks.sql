-- +goose Up
-- A large uploaded samples file is imported in chunks (byte ranges starting
-- at line boundaries), each by its own job on any worker: a first pass over
-- the file checks it and records where each chunk starts and the reader's
-- and matcher's state there; each chunk job commits its samples with its
-- row marked done, so a killed worker loses one chunk, not the import.
CREATE TABLE import_chunks (
    run_id       bigint  NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    chunk        int     NOT NULL,
    start_offset bigint  NOT NULL,
    end_offset   bigint  NOT NULL,
    state        jsonb   NOT NULL,
    done         boolean NOT NULL DEFAULT false,
    bytes_read   bigint  NOT NULL DEFAULT 0,
    samples      bigint  NOT NULL DEFAULT 0,
    verified     bigint  NOT NULL DEFAULT 0,
    pending      bigint  NOT NULL DEFAULT 0,
    changed      bigint  NOT NULL DEFAULT 0,
    file_label   boolean NOT NULL DEFAULT false,
    PRIMARY KEY (run_id, chunk)
);

-- +goose Down
DROP TABLE import_chunks;

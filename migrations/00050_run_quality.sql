-- +goose Up
-- What a run's samples say about how far its counts can be trusted, computed from the samples in
-- one scan (store.RefreshRunQuality) whenever they change: samples cut by the length limit,
-- graded by a fallback extraction rule, without an answer, and how many distinct completion texts
-- the problem with the fewest has. Runs imported as counts only have no row.
CREATE TABLE run_quality (
    run_id               bigint PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    samples              bigint NOT NULL,
    truncated            bigint NOT NULL, -- finish_reason = 'length'
    fallback_graded      bigint NOT NULL, -- rule in verify.FallbackRules
    no_answer            bigint NOT NULL, -- status 'unparseable', or graded by Reach with nothing extracted
    distinct_min         int    NOT NULL, -- fewest distinct completion texts on one problem
    distinct_min_n       int    NOT NULL, -- samples on that problem
    distinct_min_problem bigint,          -- that problem
    repeated_problems    int    NOT NULL, -- problems with fewer distinct texts than samples
    computed_at          timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE run_quality;

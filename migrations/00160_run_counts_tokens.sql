-- +goose Up
-- Completion tokens per run and problem (issue 25.5, the cost of sampling),
-- kept with the counts: AggregateRun adds them in the scan of the run's
-- samples it makes anyway, so the report reads a row per problem instead of
-- every sample again (1.0-1.8 s at a million samples with texts; reading
-- run_counts takes milliseconds). token_samples is how many of the n samples
-- carry a token count (samples.completion_tokens > 0: the store keeps 0 for
-- "the file or endpoint gave none") and tokens their sum.
ALTER TABLE run_counts
    ADD COLUMN token_samples int    NOT NULL DEFAULT 0 CHECK (token_samples >= 0),
    ADD COLUMN tokens        bigint NOT NULL DEFAULT 0 CHECK (tokens >= 0);

-- The runs aggregated before: one scan of the stored samples.
UPDATE run_counts rc SET token_samples = t.token_samples, tokens = t.tokens
FROM (SELECT run_id, problem_id, count(*) FILTER (WHERE completion_tokens > 0) AS token_samples,
        COALESCE(sum(completion_tokens) FILTER (WHERE completion_tokens > 0), 0) AS tokens
      FROM samples GROUP BY run_id, problem_id) t
WHERE rc.run_id = t.run_id AND rc.problem_id = t.problem_id AND t.token_samples > 0;

-- +goose Down
ALTER TABLE run_counts DROP COLUMN token_samples, DROP COLUMN tokens;

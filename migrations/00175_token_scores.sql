-- +goose Up
-- Issue 26: token-level divergence between the base and the RL model on the
-- same completion. The RL model's scoring endpoint is the comparison's
-- 'tokens' endpoint (the base model's is the 'score' one); scope says which
-- problems' samples are scored: 'split' (base-only and RL-only problems) or
-- 'all'.
ALTER TABLE comparison_endpoints DROP CONSTRAINT comparison_endpoints_purpose_check;
ALTER TABLE comparison_endpoints ADD CONSTRAINT comparison_endpoints_purpose_check CHECK (purpose IN ('judge', 'score', 'tokens'));
ALTER TABLE comparison_endpoints ADD COLUMN scope text NOT NULL DEFAULT 'split' CHECK (scope IN ('split', 'all'));

-- One sample's completion scored token by token under one model (role base
-- or rl): arrays, not one row per token. top_tokens and top_logprobs hold
-- top_k alternatives per position, flattened (position i at i*top_k …),
-- padded with '' and -Infinity. error set: scoring failed, arrays empty.
CREATE TABLE sample_token_scores (
    run_id        bigint NOT NULL,
    problem_id    bigint NOT NULL,
    sample_index  int    NOT NULL,
    role          text   NOT NULL CHECK (role IN ('base', 'rl')),
    model         text   NOT NULL DEFAULT '',
    method        text   NOT NULL DEFAULT '',
    tokens        text[] NOT NULL DEFAULT '{}',
    logprobs      real[] NOT NULL DEFAULT '{}',   -- natural log
    top_k         int    NOT NULL DEFAULT 0,
    top_tokens    text[] NOT NULL DEFAULT '{}',
    top_logprobs  real[] NOT NULL DEFAULT '{}',
    error         text   NOT NULL DEFAULT '',
    scored_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, problem_id, sample_index, role),
    FOREIGN KEY (run_id, problem_id, sample_index) REFERENCES samples (run_id, problem_id, sample_index) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE sample_token_scores;
DELETE FROM comparison_endpoints WHERE purpose = 'tokens';
ALTER TABLE comparison_endpoints DROP COLUMN scope;
ALTER TABLE comparison_endpoints DROP CONSTRAINT comparison_endpoints_purpose_check;
ALTER TABLE comparison_endpoints ADD CONSTRAINT comparison_endpoints_purpose_check CHECK (purpose IN ('judge', 'score'));

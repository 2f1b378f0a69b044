-- +goose Up
-- Issue 15: CoT-pass@k (a judge model's verdict on the reasoning of
-- answer-correct samples, and human labels that override it), perplexity of
-- completions under the base model (per-token log-probabilities from a
-- scoring endpoint), and the review of RL-only problems.

-- The judge and the scoring model of a comparison: one OpenAI-compatible
-- endpoint per purpose, with its settings, state and cost so far.
CREATE TABLE comparison_endpoints (
    comparison_id   bigint NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
    purpose         text   NOT NULL CHECK (purpose IN ('judge', 'score')),
    base_url        text   NOT NULL,
    model           text   NOT NULL,
    style           text   NOT NULL DEFAULT 'chat',     -- completions | chat (score: always completions)
    api_key_enc     bytea,                             -- AES-GCM with the server secret; never shown back
    max_concurrency int    NOT NULL DEFAULT 8,
    -- judge: the prompt template (Go template over .Problem, .Reference,
    -- .Completion, .Subject, .Level); score: the prompt the completions are
    -- scored after (a preset name, or 'custom' with template_text).
    template        text   NOT NULL DEFAULT '',
    template_text   text   NOT NULL DEFAULT '',
    max_tokens      int    NOT NULL DEFAULT 512,       -- judge reply budget
    -- Only the first max_per_problem samples (by sample index) of each
    -- problem and model are judged or scored; 0 = all of them.
    max_per_problem int    NOT NULL DEFAULT 0 CHECK (max_per_problem >= 0),
    method          text   NOT NULL DEFAULT '',        -- score: echo | prompt_logprobs, as detected
    method_note     text   NOT NULL DEFAULT '',        -- what the detection found, shown on the page
    status          text   NOT NULL DEFAULT 'idle' CHECK (status IN ('idle', 'running', 'paused', 'failed')),
    error           text   NOT NULL DEFAULT '',
    tokens_in       bigint NOT NULL DEFAULT 0,
    tokens_out      bigint NOT NULL DEFAULT 0,
    requests        bigint NOT NULL DEFAULT 0,
    errors          jsonb  NOT NULL DEFAULT '{}',      -- failed attempts by kind
    started_at      timestamptz,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (comparison_id, purpose)
);

-- A judge model's verdict on one sample's chain of thought. verdict NULL
-- means the judge could not be asked or answered nothing usable (error).
CREATE TABLE sample_judgments (
    run_id            bigint NOT NULL,
    problem_id        bigint NOT NULL,
    sample_index      int    NOT NULL,
    verdict           text   CHECK (verdict IN ('valid', 'flawed', 'unsure')),
    reason            text   NOT NULL DEFAULT '',
    error             text   NOT NULL DEFAULT '',
    judge_model       text   NOT NULL DEFAULT '',
    prompt_tokens     int    NOT NULL DEFAULT 0,
    completion_tokens int    NOT NULL DEFAULT 0,
    judged_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, problem_id, sample_index),
    FOREIGN KEY (run_id, problem_id, sample_index) REFERENCES samples (run_id, problem_id, sample_index) ON DELETE CASCADE
);

-- A person's label of one sample's reasoning; it overrides the judge.
CREATE TABLE sample_reasoning_labels (
    run_id       bigint NOT NULL,
    problem_id   bigint NOT NULL,
    sample_index int    NOT NULL,
    label        text   NOT NULL CHECK (label IN ('valid', 'flawed')),
    note         text   NOT NULL DEFAULT '',
    user_id      bigint REFERENCES users(id) ON DELETE SET NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, problem_id, sample_index),
    FOREIGN KEY (run_id, problem_id, sample_index) REFERENCES samples (run_id, problem_id, sample_index) ON DELETE CASCADE
);

-- Log-probabilities of one sample's completion tokens under the scoring
-- model (the base model). perplexity NULL with error set: it failed.
CREATE TABLE sample_scores (
    run_id       bigint NOT NULL,
    problem_id   bigint NOT NULL,
    sample_index int    NOT NULL,
    scorer_model text   NOT NULL DEFAULT '',
    method       text   NOT NULL DEFAULT '',
    tokens       int    NOT NULL DEFAULT 0,            -- completion tokens scored
    sum_logprob  double precision,                    -- natural log, <= 0
    perplexity   double precision,                    -- exp(-sum_logprob / tokens)
    error        text   NOT NULL DEFAULT '',
    scored_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, problem_id, sample_index),
    FOREIGN KEY (run_id, problem_id, sample_index) REFERENCES samples (run_id, problem_id, sample_index) ON DELETE CASCADE
);

-- Reviews of RL-only problems use the labels of the Invisible Leash paper
-- (Wu et al. 2025) for an apparent expansion: format fix, composition of
-- sub-skills, new solution (and verifier-fp, unsure as for base-only ones).
ALTER TABLE problem_reviews DROP CONSTRAINT problem_reviews_verdict_check;
ALTER TABLE problem_reviews ADD CONSTRAINT problem_reviews_verdict_check CHECK (verdict IN
    ('genuine', 'lucky', 'verifier-fp', 'wrong-reference', 'unsure', 'format-fix', 'composition', 'new-solution'));

-- +goose Down
DELETE FROM problem_reviews WHERE verdict IN ('format-fix', 'composition', 'new-solution');
ALTER TABLE problem_reviews DROP CONSTRAINT problem_reviews_verdict_check;
ALTER TABLE problem_reviews ADD CONSTRAINT problem_reviews_verdict_check CHECK (verdict IN
    ('genuine', 'lucky', 'verifier-fp', 'wrong-reference', 'unsure'));
DROP TABLE sample_scores, sample_reasoning_labels, sample_judgments, comparison_endpoints;

-- +goose Up
-- The verifier audit of a comparison (issue 25, item 2): the judge model's
-- second opinion on whether each chosen sample's final answer equals the
-- reference. One audit per comparison; a new start with another m or seed
-- replaces its items.
CREATE TABLE verifier_audits (
    comparison_id bigint PRIMARY KEY REFERENCES comparisons (id) ON DELETE CASCADE,
    m             int    NOT NULL CHECK (m >= 0),
    seed          bigint NOT NULL,
    status        text   NOT NULL DEFAULT 'idle', -- idle | running | paused | failed | done
    error         text   NOT NULL DEFAULT '',
    tokens_in     bigint NOT NULL DEFAULT 0,
    tokens_out    bigint NOT NULL DEFAULT 0,
    requests      bigint NOT NULL DEFAULT 0,
    started_by    bigint REFERENCES users (id) ON DELETE SET NULL,
    started_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- One audited sample. reach_status, reach_rule and reach_extracted are
-- Reach's verdict when the audit chose the sample (an accepted judge verdict
-- later overrides the sample, not this). verdict is the judge's (correct,
-- incorrect, unsure; NULL until answered), error a failed request's
-- message. resolution is a reviewer's choice on a disagreement: 'reach'
-- (keep Reach's verdict) or 'judge' (accepted as a verdict override).
CREATE TABLE verifier_audit_items (
    comparison_id   bigint NOT NULL REFERENCES verifier_audits (comparison_id) ON DELETE CASCADE,
    run_id          bigint NOT NULL,
    problem_id      bigint NOT NULL,
    sample_index    int    NOT NULL,
    stratum         text   NOT NULL, -- deciding | random
    reach_status    text   NOT NULL,
    reach_rule      text   NOT NULL DEFAULT '',
    reach_extracted text   NOT NULL DEFAULT '',
    verdict         text,
    reason          text   NOT NULL DEFAULT '',
    error           text   NOT NULL DEFAULT '',
    prompt_tokens     int  NOT NULL DEFAULT 0,
    completion_tokens int  NOT NULL DEFAULT 0,
    resolution      text,
    resolved_by     bigint REFERENCES users (id) ON DELETE SET NULL,
    resolved_at     timestamptz,
    PRIMARY KEY (comparison_id, run_id, problem_id, sample_index),
    FOREIGN KEY (run_id, problem_id, sample_index) REFERENCES samples (run_id, problem_id, sample_index) ON DELETE CASCADE
);
CREATE INDEX verifier_audit_items_sample ON verifier_audit_items (run_id, problem_id, sample_index);

-- +goose Down
DROP TABLE verifier_audit_items;
DROP TABLE verifier_audits;

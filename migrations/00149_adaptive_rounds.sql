-- +goose Up
-- The plans of adaptive sampling (jobs.AdaptiveRoundArgs): one row each time
-- the planner ran for a comparison. A row with planned > 0 is a round (the
-- first is the pilot); planned = 0 records that the design was done (budget
-- spent or nothing left to learn); an Extend adds rounds after it.
CREATE TABLE adaptive_rounds (
    comparison_id bigint NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
    seq        int    NOT NULL,             -- 1, 2, ... per comparison
    drawn      bigint NOT NULL,             -- samples stored when it was planned
    planned    bigint NOT NULL,             -- samples the round asks for (0: the design is done)
    budget     bigint NOT NULL,             -- the budget it was planned under
    widest     jsonb  NOT NULL DEFAULT '{}', -- run id -> widest 95% interval of pass@k over the curve's ks, from the counts it was planned on
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (comparison_id, seq)
);

-- +goose Down
DROP TABLE adaptive_rounds;

-- +goose Up
-- A review verdict belongs to a problem and a pair (the base model against
-- one other model): a problem base-only against step 300 is reviewed there,
-- whatever it is against step 100. Reviews made before this were made
-- against the first other model.
ALTER TABLE problem_reviews ADD COLUMN other_run_id bigint REFERENCES runs(id) ON DELETE CASCADE;
UPDATE problem_reviews pr SET other_run_id = (SELECT r.id FROM runs r WHERE r.comparison_id = pr.comparison_id
    ORDER BY r.position OFFSET 1 LIMIT 1);
DELETE FROM problem_reviews WHERE other_run_id IS NULL;
ALTER TABLE problem_reviews ALTER COLUMN other_run_id SET NOT NULL;
ALTER TABLE problem_reviews DROP CONSTRAINT problem_reviews_pkey;
ALTER TABLE problem_reviews ADD PRIMARY KEY (comparison_id, problem_id, other_run_id);

-- +goose Down
DELETE FROM problem_reviews pr WHERE other_run_id <> (SELECT r.id FROM runs r WHERE r.comparison_id = pr.comparison_id
    ORDER BY r.position OFFSET 1 LIMIT 1);
ALTER TABLE problem_reviews DROP CONSTRAINT problem_reviews_pkey;
ALTER TABLE problem_reviews ADD PRIMARY KEY (comparison_id, problem_id);
ALTER TABLE problem_reviews DROP COLUMN other_run_id;

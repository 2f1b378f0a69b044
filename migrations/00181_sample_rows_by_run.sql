-- +goose Up
-- The five tables holding rows about one sample reference its run instead
-- of the sample (issue 28). A foreign key to samples is checked row by row
-- for every deleted sample, even when these tables are empty: 80–85 % of a
-- delete of samples (README "Deleting a comparison at 10 M"). Deleting a
-- run still cascades, through each table's index leading with run_id (the
-- primary keys; verifier_audit_items_sample for the audit's items); the
-- code that deletes or replaces samples of a run it keeps deletes their
-- rows itself, and the code that writes them locks the sample (FOR KEY
-- SHARE, as the foreign key did) so none is written for a deleted sample.
--
-- No row is rewritten or deleted. None can reference a missing sample: the
-- dropped keys were validated when their tables were created and enforced
-- since, and every sample's run exists (samples.run_id references runs), so
-- the new keys validate on the rows as they are.
ALTER TABLE sample_judgments DROP CONSTRAINT sample_judgments_run_id_problem_id_sample_index_fkey,
    ADD FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE;
ALTER TABLE sample_reasoning_labels DROP CONSTRAINT sample_reasoning_labels_run_id_problem_id_sample_index_fkey,
    ADD FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE;
ALTER TABLE sample_scores DROP CONSTRAINT sample_scores_run_id_problem_id_sample_index_fkey,
    ADD FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE;
ALTER TABLE verifier_audit_items DROP CONSTRAINT verifier_audit_items_run_id_problem_id_sample_index_fkey,
    ADD FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE;
ALTER TABLE sample_token_scores DROP CONSTRAINT sample_token_scores_run_id_problem_id_sample_index_fkey,
    ADD FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE;

-- +goose Down
-- Rows left for a sample that is gone (none should be) would fail the keys.
DELETE FROM sample_judgments x WHERE NOT EXISTS (SELECT 1 FROM samples s
    WHERE s.run_id = x.run_id AND s.problem_id = x.problem_id AND s.sample_index = x.sample_index);
DELETE FROM sample_reasoning_labels x WHERE NOT EXISTS (SELECT 1 FROM samples s
    WHERE s.run_id = x.run_id AND s.problem_id = x.problem_id AND s.sample_index = x.sample_index);
DELETE FROM sample_scores x WHERE NOT EXISTS (SELECT 1 FROM samples s
    WHERE s.run_id = x.run_id AND s.problem_id = x.problem_id AND s.sample_index = x.sample_index);
DELETE FROM verifier_audit_items x WHERE NOT EXISTS (SELECT 1 FROM samples s
    WHERE s.run_id = x.run_id AND s.problem_id = x.problem_id AND s.sample_index = x.sample_index);
DELETE FROM sample_token_scores x WHERE NOT EXISTS (SELECT 1 FROM samples s
    WHERE s.run_id = x.run_id AND s.problem_id = x.problem_id AND s.sample_index = x.sample_index);
ALTER TABLE sample_judgments DROP CONSTRAINT sample_judgments_run_id_fkey,
    ADD FOREIGN KEY (run_id, problem_id, sample_index) REFERENCES samples (run_id, problem_id, sample_index) ON DELETE CASCADE;
ALTER TABLE sample_reasoning_labels DROP CONSTRAINT sample_reasoning_labels_run_id_fkey,
    ADD FOREIGN KEY (run_id, problem_id, sample_index) REFERENCES samples (run_id, problem_id, sample_index) ON DELETE CASCADE;
ALTER TABLE sample_scores DROP CONSTRAINT sample_scores_run_id_fkey,
    ADD FOREIGN KEY (run_id, problem_id, sample_index) REFERENCES samples (run_id, problem_id, sample_index) ON DELETE CASCADE;
ALTER TABLE verifier_audit_items DROP CONSTRAINT verifier_audit_items_run_id_fkey,
    ADD FOREIGN KEY (run_id, problem_id, sample_index) REFERENCES samples (run_id, problem_id, sample_index) ON DELETE CASCADE;
ALTER TABLE sample_token_scores DROP CONSTRAINT sample_token_scores_run_id_fkey,
    ADD FOREIGN KEY (run_id, problem_id, sample_index) REFERENCES samples (run_id, problem_id, sample_index) ON DELETE CASCADE;

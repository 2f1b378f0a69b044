-- +goose Up
-- samples is partitioned by run (issue 28): one partition per run,
-- samples_run_<id>, made when the run is inserted (trigger below). Each
-- run's search index becomes an ordinary index of its partition, so building
-- it reads that run only: as a partial index of one table it scanned every
-- run's samples, 880–950 s per 512,000-sample run at 10 M (README "Lab
-- scale"). Deleting a comparison empties its runs' partitions (TRUNCATE: a
-- few files unlinked, not millions of rows deleted and vacuumed away).
--
-- Existing samples are not moved: the old table becomes one partition,
-- samples_legacy, holding every run that exists now (its bound lists their
-- ids), so the migration rewrites no row; it reads the table once to check
-- that bound. Its runs keep their partial search indexes and their
-- row-by-row deletes.
--
-- A partition cannot be attached to a table with foreign keys without
-- locking the referenced tables (SHARE ROW EXCLUSIVE on runs, problems and
-- users), which would make every transaction that inserts a run deadlock
-- with any other that writes runs. So samples has no foreign keys; triggers
-- do what they did: a run's delete deletes its samples, a problem's deletes
-- its samples, a user's clears override_by. A sample of a run without a
-- partition cannot be stored (no partition accepts it).
ALTER TABLE samples DROP CONSTRAINT samples_run_id_fkey,
    DROP CONSTRAINT samples_problem_id_fkey,
    DROP CONSTRAINT samples_override_by_fkey;
ALTER TABLE samples RENAME TO samples_legacy;
ALTER INDEX samples_pkey RENAME TO samples_legacy_pkey;
ALTER INDEX samples_by_status RENAME TO samples_legacy_by_status;
ALTER INDEX samples_overridden RENAME TO samples_legacy_overridden;
ALTER INDEX samples_pending RENAME TO samples_legacy_pending;
ALTER INDEX samples_problem RENAME TO samples_legacy_problem;

CREATE TABLE samples (LIKE samples_legacy INCLUDING DEFAULTS INCLUDING STORAGE INCLUDING COMPRESSION)
    PARTITION BY LIST (run_id);
ALTER TABLE samples ADD PRIMARY KEY (run_id, problem_id, sample_index);
CREATE INDEX samples_by_status ON samples (run_id, problem_id, status, sample_index);
CREATE INDEX samples_overridden ON samples (run_id) WHERE override_from IS NOT NULL;
CREATE INDEX samples_pending ON samples (run_id) WHERE status = 'pending';
CREATE INDEX samples_problem ON samples (problem_id);

-- The old table's indexes match these, so attaching it builds none.
-- +goose StatementBegin
DO $$
DECLARE
    ids text;
BEGIN
    SELECT string_agg(id::text, ',' ORDER BY id) INTO ids FROM runs;
    IF ids IS NULL THEN
        DROP TABLE samples_legacy; -- no run, so no sample (the dropped key)
    ELSE
        EXECUTE format('ALTER TABLE samples ATTACH PARTITION samples_legacy FOR VALUES IN (%s)', ids);
    END IF;
END $$;
-- +goose StatementEnd

-- A run's partition, made with the run. LIKE then ATTACH takes SHARE UPDATE
-- EXCLUSIVE on samples (readers and writers of other runs go on);
-- CREATE TABLE … PARTITION OF would take ACCESS EXCLUSIVE.
-- +goose StatementBegin
CREATE FUNCTION reach_run_samples_partition() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    part text := 'samples_run_' || NEW.id;
BEGIN
    EXECUTE format('CREATE TABLE %I (LIKE samples INCLUDING DEFAULTS INCLUDING STORAGE INCLUDING COMPRESSION)', part);
    EXECUTE format('ALTER TABLE samples ATTACH PARTITION %I FOR VALUES IN (%s)', part, NEW.id);
    RETURN NULL;
END $fn$;
-- +goose StatementEnd
CREATE TRIGGER runs_samples_partition AFTER INSERT ON runs
    FOR EACH ROW EXECUTE FUNCTION reach_run_samples_partition();

-- A deleted run's samples (the dropped key's ON DELETE CASCADE), row by
-- row. store.DeleteComparison empties a run's own partition first, each
-- with a TRUNCATE in its own transaction, so this finds none there. A
-- TRUNCATE here would take ACCESS EXCLUSIVE on each deleted run's
-- partition inside the deleting transaction: with a reader that locks every
-- partition (a query not pruned when planned) that deadlocked. The emptied
-- partition stays attached until store.DropOrphanSamplePartitions drops it.
-- +goose StatementBegin
CREATE FUNCTION reach_run_samples_delete() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    DELETE FROM samples WHERE run_id = OLD.id;
    RETURN NULL;
END $fn$;
-- +goose StatementEnd
CREATE TRIGGER runs_samples_delete AFTER DELETE ON runs
    FOR EACH ROW EXECUTE FUNCTION reach_run_samples_delete();

-- +goose StatementBegin
CREATE FUNCTION reach_problem_samples_delete() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    DELETE FROM samples s USING gone g WHERE s.problem_id = g.id;
    RETURN NULL;
END $fn$;
-- +goose StatementEnd
CREATE TRIGGER problems_samples_delete AFTER DELETE ON problems
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION reach_problem_samples_delete();

-- +goose StatementBegin
CREATE FUNCTION reach_user_samples_unset() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE samples s SET override_by = NULL FROM gone g WHERE s.override_by = g.id;
    RETURN NULL;
END $fn$;
-- +goose StatementEnd
CREATE TRIGGER users_samples_unset AFTER DELETE ON users
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION reach_user_samples_unset();

-- +goose Down
-- Every sample is copied back into one table (the search indexes go with
-- the partitions; the search_index job builds them again).
DROP TRIGGER runs_samples_partition ON runs;
DROP TRIGGER runs_samples_delete ON runs;
DROP TRIGGER problems_samples_delete ON problems;
DROP TRIGGER users_samples_unset ON users;
DROP FUNCTION reach_run_samples_partition();
DROP FUNCTION reach_run_samples_delete();
DROP FUNCTION reach_problem_samples_delete();
DROP FUNCTION reach_user_samples_unset();
CREATE TABLE samples_one (LIKE samples INCLUDING DEFAULTS INCLUDING STORAGE INCLUDING COMPRESSION);
INSERT INTO samples_one SELECT s.* FROM samples s WHERE EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id);
DROP TABLE samples;
ALTER TABLE samples_one RENAME TO samples;
ALTER TABLE samples ADD PRIMARY KEY (run_id, problem_id, sample_index),
    ADD FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE,
    ADD FOREIGN KEY (problem_id) REFERENCES problems (id) ON DELETE CASCADE,
    ADD FOREIGN KEY (override_by) REFERENCES users (id) ON DELETE SET NULL;
CREATE INDEX samples_by_status ON samples (run_id, problem_id, status, sample_index);
CREATE INDEX samples_overridden ON samples (run_id) WHERE override_from IS NOT NULL;
CREATE INDEX samples_pending ON samples (run_id) WHERE status = 'pending';
CREATE INDEX samples_problem ON samples (problem_id);

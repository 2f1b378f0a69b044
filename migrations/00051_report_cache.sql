-- +goose Up
-- Reports are computed once per change and stored (issue 11). Every change that alters a
-- comparison's report adds a row to report_changes (triggers below): its counts, its runs'
-- quality figures, its statistics, its runs or its own fields, or its dataset's problems. A
-- report stored under the (count, largest id) of its comparison's rows is current; a
-- transaction that commits late adds to the count, so no change is missed. Insert-only:
-- concurrent jobs never wait on each other's row locks here.
CREATE TABLE report_changes (
    id            bigserial PRIMARY KEY,
    comparison_id bigint NOT NULL, -- no foreign key: rows of a comparison being deleted are written while it goes
    at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX report_changes_comparison ON report_changes (comparison_id, id);

-- The last computed report per comparison and variant (zstd-compressed JSON), with the
-- report_changes version it was computed at.
CREATE TABLE comparison_reports (
    comparison_id bigint NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
    variant       text   NOT NULL,
    version       text   NOT NULL,
    data          bytea  NOT NULL,
    seconds       double precision NOT NULL DEFAULT 0, -- compute time
    computed_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (comparison_id, variant)
);

-- +goose StatementBegin
CREATE FUNCTION reach_report_changed_by_run() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO report_changes (comparison_id)
            SELECT DISTINCT r.comparison_id FROM old_rows o JOIN runs r ON r.id = o.run_id;
    ELSE
        INSERT INTO report_changes (comparison_id)
            SELECT DISTINCT r.comparison_id FROM new_rows n JOIN runs r ON r.id = n.run_id;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION reach_report_changed_by_problem() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO report_changes (comparison_id)
            SELECT c.id FROM comparisons c WHERE c.dataset_id IN (SELECT DISTINCT dataset_id FROM old_rows);
    ELSE
        INSERT INTO report_changes (comparison_id)
            SELECT c.id FROM comparisons c WHERE c.dataset_id IN (SELECT DISTINCT dataset_id FROM new_rows);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION reach_report_changed_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'comparisons' THEN
        INSERT INTO report_changes (comparison_id) VALUES (COALESCE(NEW.id, OLD.id));
    ELSE
        INSERT INTO report_changes (comparison_id) VALUES (COALESCE(NEW.comparison_id, OLD.comparison_id));
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER run_counts_ins AFTER INSERT ON run_counts REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_run();
CREATE TRIGGER run_counts_upd AFTER UPDATE ON run_counts REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_run();
CREATE TRIGGER run_counts_del AFTER DELETE ON run_counts REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_run();
CREATE TRIGGER run_quality_ins AFTER INSERT ON run_quality REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_run();
CREATE TRIGGER run_quality_upd AFTER UPDATE ON run_quality REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_run();
CREATE TRIGGER run_quality_del AFTER DELETE ON run_quality REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_run();
CREATE TRIGGER problems_ins AFTER INSERT ON problems REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_problem();
CREATE TRIGGER problems_upd AFTER UPDATE ON problems REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_problem();
CREATE TRIGGER problems_del AFTER DELETE ON problems REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_problem();
CREATE TRIGGER comparison_stats_added AFTER INSERT OR DELETE ON comparison_stats
    FOR EACH ROW EXECUTE FUNCTION reach_report_changed_row();
-- Not when only computed_at moves (TouchStats: "still current").
CREATE TRIGGER comparison_stats_changed AFTER UPDATE ON comparison_stats FOR EACH ROW
    WHEN (OLD.hash IS DISTINCT FROM NEW.hash OR OLD.status IS DISTINCT FROM NEW.status
        OR OLD.error IS DISTINCT FROM NEW.error OR OLD.data IS DISTINCT FROM NEW.data)
    EXECUTE FUNCTION reach_report_changed_row();
CREATE TRIGGER runs_changed AFTER UPDATE ON runs FOR EACH ROW
    WHEN (OLD.model_name IS DISTINCT FROM NEW.model_name OR OLD.role IS DISTINCT FROM NEW.role
        OR OLD.step IS DISTINCT FROM NEW.step OR OLD.verdict_source IS DISTINCT FROM NEW.verdict_source
        OR OLD.has_texts IS DISTINCT FROM NEW.has_texts OR OLD.verdicts_changed IS DISTINCT FROM NEW.verdicts_changed
        OR OLD.status IS DISTINCT FROM NEW.status OR OLD.position IS DISTINCT FROM NEW.position)
    EXECUTE FUNCTION reach_report_changed_row();
CREATE TRIGGER runs_added AFTER INSERT OR DELETE ON runs FOR EACH ROW EXECUTE FUNCTION reach_report_changed_row();
CREATE TRIGGER comparisons_changed AFTER UPDATE ON comparisons FOR EACH ROW
    WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.status IS DISTINCT FROM NEW.status
        OR OLD.source_note IS DISTINCT FROM NEW.source_note OR OLD.dataset_id IS DISTINCT FROM NEW.dataset_id)
    EXECUTE FUNCTION reach_report_changed_row();

-- +goose Down
DROP TRIGGER comparisons_changed ON comparisons;
DROP TRIGGER runs_added ON runs;
DROP TRIGGER runs_changed ON runs;
DROP TRIGGER comparison_stats_changed ON comparison_stats;
DROP TRIGGER comparison_stats_added ON comparison_stats;
DROP TRIGGER problems_del ON problems;
DROP TRIGGER problems_upd ON problems;
DROP TRIGGER problems_ins ON problems;
DROP TRIGGER run_quality_del ON run_quality;
DROP TRIGGER run_quality_upd ON run_quality;
DROP TRIGGER run_quality_ins ON run_quality;
DROP TRIGGER run_counts_del ON run_counts;
DROP TRIGGER run_counts_upd ON run_counts;
DROP TRIGGER run_counts_ins ON run_counts;
DROP FUNCTION reach_report_changed_row();
DROP FUNCTION reach_report_changed_by_problem();
DROP FUNCTION reach_report_changed_by_run();
DROP TABLE comparison_reports;
DROP TABLE report_changes;

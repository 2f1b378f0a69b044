-- +goose Up
-- The report's CoT-pass@k and perplexity parts (issue 15) are computed from
-- judgments, reasoning labels, scores and the judge and scoring endpoints:
-- a change to any of them changes the report (see 00051_report_cache).
CREATE TRIGGER sample_judgments_ins AFTER INSERT ON sample_judgments REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_run();
CREATE TRIGGER sample_judgments_upd AFTER UPDATE ON sample_judgments REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_run();
CREATE TRIGGER sample_judgments_del AFTER DELETE ON sample_judgments REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_run();
CREATE TRIGGER sample_reasoning_labels_ins AFTER INSERT ON sample_reasoning_labels REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_run();
CREATE TRIGGER sample_reasoning_labels_upd AFTER UPDATE ON sample_reasoning_labels REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_run();
CREATE TRIGGER sample_reasoning_labels_del AFTER DELETE ON sample_reasoning_labels REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_run();
CREATE TRIGGER sample_scores_ins AFTER INSERT ON sample_scores REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_run();
CREATE TRIGGER sample_scores_upd AFTER UPDATE ON sample_scores REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_run();
CREATE TRIGGER sample_scores_del AFTER DELETE ON sample_scores REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION reach_report_changed_by_run();
-- Not when only the usage counters move (every judge request adds to them).
CREATE TRIGGER comparison_endpoints_added AFTER INSERT OR DELETE ON comparison_endpoints
    FOR EACH ROW EXECUTE FUNCTION reach_report_changed_row();
CREATE TRIGGER comparison_endpoints_changed AFTER UPDATE ON comparison_endpoints FOR EACH ROW
    WHEN (OLD.base_url IS DISTINCT FROM NEW.base_url OR OLD.model IS DISTINCT FROM NEW.model
        OR OLD.max_per_problem IS DISTINCT FROM NEW.max_per_problem OR OLD.method IS DISTINCT FROM NEW.method
        OR OLD.method_note IS DISTINCT FROM NEW.method_note OR OLD.status IS DISTINCT FROM NEW.status
        OR OLD.error IS DISTINCT FROM NEW.error)
    EXECUTE FUNCTION reach_report_changed_row();

-- +goose Down
DROP TRIGGER comparison_endpoints_changed ON comparison_endpoints;
DROP TRIGGER comparison_endpoints_added ON comparison_endpoints;
DROP TRIGGER sample_scores_del ON sample_scores;
DROP TRIGGER sample_scores_upd ON sample_scores;
DROP TRIGGER sample_scores_ins ON sample_scores;
DROP TRIGGER sample_reasoning_labels_del ON sample_reasoning_labels;
DROP TRIGGER sample_reasoning_labels_upd ON sample_reasoning_labels;
DROP TRIGGER sample_reasoning_labels_ins ON sample_reasoning_labels;
DROP TRIGGER sample_judgments_del ON sample_judgments;
DROP TRIGGER sample_judgments_upd ON sample_judgments;
DROP TRIGGER sample_judgments_ins ON sample_judgments;

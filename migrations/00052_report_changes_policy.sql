-- +goose Up
-- A comparison's grading policy is part of its report (each model's grading_policy).
DROP TRIGGER comparisons_changed ON comparisons;
CREATE TRIGGER comparisons_changed AFTER UPDATE ON comparisons FOR EACH ROW
    WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.status IS DISTINCT FROM NEW.status
        OR OLD.source_note IS DISTINCT FROM NEW.source_note OR OLD.dataset_id IS DISTINCT FROM NEW.dataset_id
        OR OLD.grading_policy IS DISTINCT FROM NEW.grading_policy)
    EXECUTE FUNCTION reach_report_changed_row();

-- +goose Down
DROP TRIGGER comparisons_changed ON comparisons;
CREATE TRIGGER comparisons_changed AFTER UPDATE ON comparisons FOR EACH ROW
    WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.status IS DISTINCT FROM NEW.status
        OR OLD.source_note IS DISTINCT FROM NEW.source_note OR OLD.dataset_id IS DISTINCT FROM NEW.dataset_id)
    EXECUTE FUNCTION reach_report_changed_row();

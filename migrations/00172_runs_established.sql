-- +goose Up
-- A run is established once its comparison has been ready with it. A model
-- added later (a checkpoint a followed folder wrote, a model added from the
-- page) whose import fails takes only itself away: the established runs keep
-- their samples and the comparison stays ready with the error as its note.
ALTER TABLE runs ADD COLUMN established boolean NOT NULL DEFAULT false;
UPDATE runs SET established = true WHERE comparison_id IN (SELECT id FROM comparisons WHERE status = 'ready');

-- +goose StatementBegin
CREATE FUNCTION runs_establish() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE runs SET established = true WHERE comparison_id = NEW.id AND NOT established;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER comparisons_ready_establish AFTER UPDATE OF status ON comparisons
    FOR EACH ROW WHEN (NEW.status = 'ready' AND OLD.status IS DISTINCT FROM 'ready') EXECUTE FUNCTION runs_establish();

-- +goose Down
DROP TRIGGER comparisons_ready_establish ON comparisons;
DROP FUNCTION runs_establish();
ALTER TABLE runs DROP COLUMN established;

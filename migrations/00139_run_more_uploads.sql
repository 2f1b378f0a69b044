-- +goose Up
-- A model's samples may come in several files (one per seed, per repeat):
-- the first is upload_id, the others these, read after it in this order and
-- pooled per problem. Forgotten (and their uploads deleted) with upload_id.
ALTER TABLE runs ADD COLUMN more_upload_ids bigint[] NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE runs DROP COLUMN more_upload_ids;

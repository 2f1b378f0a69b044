-- +goose Up
-- The MD5 of each sample's completion, computed by the importer on all cores as the text passes
-- through: the quality figures count distinct texts per problem (store.RefreshRunQuality) from it
-- instead of reading back and hashing every stored completion (about a fifth of a large import's
-- time). NULL for samples stored without it (older rows, sampled completions): the query then
-- hashes the text as before. Adding a nullable column rewrites nothing.
ALTER TABLE samples ADD COLUMN text_hash uuid;

-- +goose Down
ALTER TABLE samples DROP COLUMN text_hash;

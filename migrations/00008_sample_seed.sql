-- +goose Up
-- The seed a sample was requested with (jobs.SampleSeed of the comparison's seed, the problem's key
-- and the sample index), so a sample can be drawn again; NULL when the sampling config set no seed
-- or the sample was imported. Adding a nullable column rewrites no rows.
ALTER TABLE samples ADD COLUMN seed bigint;

-- +goose Down
ALTER TABLE samples DROP COLUMN seed;

-- +goose Up
-- Creating a project makes its creator an owner, with uploads, sampling and
-- Test connection; only admins may, and the users admins grant it to.
ALTER TABLE users ADD COLUMN can_create_projects bool NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE users DROP COLUMN can_create_projects;

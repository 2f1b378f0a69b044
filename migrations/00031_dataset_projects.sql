-- +goose Up
-- The projects a dataset belongs to: the project of the comparison that
-- loaded it, and every project a member who can read it used it in since
-- (an explicit share: that project's members then see its problems). Only
-- members of one of these projects (and admins) see or use the dataset.
CREATE TABLE dataset_projects (
    dataset_id bigint NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    project_id bigint NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    added_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (dataset_id, project_id)
);
CREATE INDEX dataset_projects_project ON dataset_projects (project_id);
-- Existing datasets belong to the projects of the comparisons using them;
-- a dataset no comparison uses stays with admins until one does.
INSERT INTO dataset_projects (dataset_id, project_id)
    SELECT DISTINCT dataset_id, project_id FROM comparisons WHERE dataset_id IS NOT NULL;

-- +goose Down
DROP TABLE dataset_projects;
